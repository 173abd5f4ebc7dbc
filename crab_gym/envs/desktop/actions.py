"""The desktop's Actions: what an agent may do, how tasks set up and check the machine.

Every Action here runs against a :class:`~crab_gym.envs.desktop.machine.DesktopMachine`,
injected as the kept ``env`` parameter, in this process or behind ``crab-gym serve``. Four
groups, all declared (the server accepts nothing else):

* :data:`AGENT_ACTIONS` -- CRAB's desktop set plus ``wait`` and ``complete``. Screen
  coordinates are **floats in [0, 1]**: ``x`` from the left edge, ``y`` from the top edge.
  Key names are an enum of pyautogui's ``KEYBOARD_KEYS``.
* :data:`SETUP_ACTIONS` -- put the desktop into a task's starting state.
* :data:`PROBE_ACTIONS` -- read-only checks of the machine's real state (files, windows,
  settings), each returning a bool; task evaluators are built from them.
* :data:`OBSERVATION_ACTIONS` -- screenshot, window titles, machine info.

No ``from __future__ import annotations`` here: the core reads these type hints at runtime.
"""

from pathlib import PurePosixPath
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field, ValidationError, WrapValidator
from pydantic_core import PydanticCustomError

from crab_gym.core import Action, ActionArgumentError, action
from crab_gym.envs.desktop.keys import KEYBOARD_KEYS, unknown_key_message

ENV_NAME = "desktop"

Coord = Annotated[float, Field(ge=0.0, le=1.0)]


def _key_name(value: Any, handler: Any) -> Any:
    """Validate a key name; an unknown one gets the nearest names, not all 194 of them."""
    try:
        return handler(value)
    except ValidationError:
        raise PydanticCustomError("key_name", unknown_key_message(value)) from None


# 194 names, a JSON enum (the wrap validator changes only the error message, not the schema)
Key = Annotated[Literal[KEYBOARD_KEYS], WrapValidator(_key_name)]  # type: ignore[valid-type]
AppName = Literal["terminal", "editor"]
RelPath = Annotated[str, Field(min_length=1, max_length=255)]
#: Longest text one write_text call may type.
MAX_TEXT = 1000
#: Longest single wait.
MAX_WAIT = 3.0


# --------------------------------------------------------------------------- agent actions
def _require_keys(action_name: str, param: str, keys: list, env: Any) -> None:
    """Reject (before pressing anything) keys this display's keyboard does not have."""
    missing = env.desktop.missing_keys(keys)
    if missing:
        raise ActionArgumentError(action_name, param, f"this display's keyboard has no key {missing}")


@action(env_name=ENV_NAME)
def click(x: Coord, y: Coord, env: Any) -> None:
    """Move the pointer to a point of the screen and click the left button there.

    Args:
        x: horizontal position, 0.0 = left edge, 1.0 = right edge of the screen.
        y: vertical position, 0.0 = top edge, 1.0 = bottom edge of the screen.
    """
    env.desktop.click(x, y)


@action(env_name=ENV_NAME)
def double_click(x: Coord, y: Coord, env: Any) -> None:
    """Double-click the left button at a point of the screen.

    Args:
        x: horizontal position, 0.0 = left edge, 1.0 = right edge of the screen.
        y: vertical position, 0.0 = top edge, 1.0 = bottom edge of the screen.
    """
    env.desktop.click(x, y, clicks=2)


@action(env_name=ENV_NAME)
def right_click(x: Coord, y: Coord, env: Any) -> None:
    """Click the right button at a point of the screen (opens context menus).

    Args:
        x: horizontal position, 0.0 = left edge, 1.0 = right edge of the screen.
        y: vertical position, 0.0 = top edge, 1.0 = bottom edge of the screen.
    """
    env.desktop.click(x, y, button="right")


@action(env_name=ENV_NAME)
def move_to(x: Coord, y: Coord, env: Any) -> None:
    """Move the pointer to a point of the screen without clicking.

    Args:
        x: horizontal position, 0.0 = left edge, 1.0 = right edge of the screen.
        y: vertical position, 0.0 = top edge, 1.0 = bottom edge of the screen.
    """
    env.desktop.move_to(x, y)


@action(env_name=ENV_NAME)
def drag_to(x: Coord, y: Coord, env: Any) -> None:
    """Hold the left button down at the pointer's position and drag to a point, then release.

    Args:
        x: horizontal position to drag to, 0.0 = left edge, 1.0 = right edge of the screen.
        y: vertical position to drag to, 0.0 = top edge, 1.0 = bottom edge of the screen.
    """
    env.desktop.drag_to(x, y)


@action(env_name=ENV_NAME)
def mouse_scroll(clicks: Annotated[int, Field(ge=-10, le=10)] = 1, env: Any = None) -> None:
    """Scroll the mouse wheel where the pointer is.

    Args:
        clicks: wheel steps; positive scrolls up, negative scrolls down.
    """
    env.desktop.scroll(clicks)


@action(env_name=ENV_NAME)
def key_press(key: Key, env: Any) -> None:
    """Press and release one key.

    Args:
        key: the key's name as pyautogui spells it, e.g. "enter", "tab", "a", "f5".
    """
    _require_keys("key_press", "key", [key], env)
    env.desktop.key_press(key)


@action(env_name=ENV_NAME)
def hotkey(keys: Annotated[list[Key], Field(min_length=1, max_length=4)], env: Any) -> None:
    """Press keys down in order and release them in reverse order, e.g. ["ctrl", "s"].

    Args:
        keys: one to four key names as pyautogui spells them.
    """
    _require_keys("hotkey", "keys", keys, env)
    env.desktop.hotkey(keys)


@action(env_name=ENV_NAME)
def write_text(text: Annotated[str, Field(max_length=MAX_TEXT)], env: Any) -> None:
    """Type text with the keyboard into the focused window ("\\n" presses Enter).

    Args:
        text: the text to type (ASCII characters that have a key; others are skipped).
    """
    env.desktop.write(text)


@action(env_name=ENV_NAME)
def wait(seconds: Annotated[float, Field(ge=0.0, le=MAX_WAIT)] = 1.0, env: Any = None) -> None:
    """Do nothing for a while, e.g. until an application has started.

    Args:
        seconds: how long to wait, at most 3 seconds.
    """
    env.sleep(seconds)


@action(env_name=ENV_NAME)
def complete(env: Any = None) -> bool:
    """Declare that the task is done; the episode ends."""
    return True


@action(env_name=ENV_NAME)
def declare_infeasible(reason: Annotated[str, Field(max_length=500)], env: Any = None) -> bool:
    """Declare that the task cannot be done as asked, and why; the episode ends.

    Args:
        reason: what makes it impossible, naming the missing thing (e.g. the file or the
            setting that does not exist).
    """
    return True


AGENT_ACTIONS: tuple[Action, ...] = (
    click, double_click, right_click, move_to, drag_to, mouse_scroll,
    key_press, hotkey, write_text, wait, complete, declare_infeasible,
)
#: Agent actions the gym env handles itself (they end the episode; nothing runs on a machine).
EPISODE_ACTIONS: tuple[str, ...] = ("complete", "declare_infeasible")


# --------------------------------------------------------------------------- setup actions
@action(env_name=ENV_NAME)
def reset_desktop(env: Any) -> None:
    """Close the apps the env opened, empty the work directory and restore default settings."""
    env.reset()


@action(env_name=ENV_NAME)
def write_file(path: RelPath, text: Annotated[str, Field(max_length=100_000)] = "",
               executable: bool = False, env: Any = None) -> None:
    """Create a file in the work directory (parent directories too).

    Args:
        path: path relative to the work directory.
        text: the file's content.
        executable: mark the file executable.
    """
    env.write_file(path, text, executable)


@action(env_name=ENV_NAME)
def make_dirs(path: RelPath, env: Any) -> None:
    """Create a directory (and its parents) in the work directory.

    Args:
        path: path relative to the work directory.
    """
    env.make_dirs(path)


@action(env_name=ENV_NAME)
def launch_app(app: AppName, file: Annotated[str, Field(max_length=255)] = "",
               x: Coord = 0.0, y: Coord = 0.0,
               width: Annotated[float, Field(gt=0.0, le=1.0)] = 0.6,
               height: Annotated[float, Field(gt=0.0, le=1.0)] = 0.6, env: Any = None) -> str:
    """Open an application in the work directory, place its window and focus it.

    Args:
        app: "terminal" (xterm running bash) or "editor" (Mousepad).
        file: a file (relative to the work directory) for the editor to open.
        x: left edge of the window, as a fraction of the screen width.
        y: top edge of the window, as a fraction of the screen height.
        width: window width, as a fraction of the screen width.
        height: window height, as a fraction of the screen height.
    """
    return env.launch(app, file, (x, y, width, height))


@action(env_name=ENV_NAME)
def focus_app(app: AppName, env: Any) -> None:
    """Raise and focus the (most recently listed) window of an application.

    Args:
        app: "terminal" or "editor".
    """
    env.focus(app)


@action(env_name=ENV_NAME)
def set_setting(schema_id: Annotated[str, Field(pattern=r"^[A-Za-z0-9.\-]{1,200}$")],
                key: Annotated[str, Field(pattern=r"^[a-z0-9\-]{1,100}$")],
                value: Annotated[str, Field(max_length=200)], env: Any) -> None:
    """Set a GSettings key in the env's private settings store (never the user's own).

    Args:
        schema_id: GSettings schema id, e.g. "org.xfce.mousepad.preferences.view".
        key: key name, e.g. "show-line-numbers".
        value: the value in GVariant text form, e.g. "true", "4", "'Monospace 12'".
    """
    env.set_setting(schema_id, key, value)


@action(env_name=ENV_NAME)
def set_clipboard(text: Annotated[str, Field(max_length=10_000)], env: Any) -> None:
    """Put text on the X clipboard (the CLIPBOARD selection).

    Args:
        text: the clipboard's new content.
    """
    env.set_clipboard(text)


SETUP_ACTIONS: tuple[Action, ...] = (reset_desktop, write_file, make_dirs, launch_app, focus_app, set_setting,
                                     set_clipboard)


# --------------------------------------------------------------------------- probes (checks)
def _norm(text: str) -> str:
    """Compare texts the way a person would: line endings and trailing newlines ignored."""
    return text.replace("\r\n", "\n").rstrip("\n")


@action(env_name=ENV_NAME)
def file_exists(path: RelPath, env: Any) -> bool:
    """Whether a regular file exists in the work directory.

    Args:
        path: path relative to the work directory.
    """
    return env.is_file(path)


@action(env_name=ENV_NAME)
def dir_exists(path: RelPath, env: Any) -> bool:
    """Whether a directory exists in the work directory.

    Args:
        path: path relative to the work directory.
    """
    return env.is_dir(path)


@action(env_name=ENV_NAME)
def path_missing(path: RelPath, env: Any) -> bool:
    """Whether nothing (no file, directory or link) exists at a path of the work directory.

    Args:
        path: path relative to the work directory.
    """
    return not env.exists(path)


@action(env_name=ENV_NAME)
def file_text_equals(path: RelPath, text: str, env: Any) -> bool:
    """Whether a file's text equals ``text`` (ignoring CRLF vs LF and trailing newlines).

    Args:
        path: path relative to the work directory.
        text: the expected content.
    """
    content = env.read_text(path)
    return content is not None and _norm(content) == _norm(text)


@action(env_name=ENV_NAME)
def file_contains(path: RelPath, text: str, env: Any) -> bool:
    """Whether a file's text contains ``text``.

    Args:
        path: path relative to the work directory.
        text: the expected fragment.
    """
    content = env.read_text(path)
    return content is not None and text.replace("\r\n", "\n") in content.replace("\r\n", "\n")


@action(env_name=ENV_NAME)
def file_is_executable(path: RelPath, env: Any) -> bool:
    """Whether a file exists and is executable.

    Args:
        path: path relative to the work directory.
    """
    return env.is_executable(path)


@action(env_name=ENV_NAME)
def window_open(app: AppName, title_contains: Annotated[str, Field(max_length=200)] = "", env: Any = None) -> bool:
    """Whether a window of the app is open (and its title contains a fragment, if given).

    Args:
        app: "terminal" or "editor".
        title_contains: a fragment the window title must contain ("" = any title).
    """
    return any(title_contains in w.title for w in env.app_windows(app))


@action(env_name=ENV_NAME)
def app_closed(app: AppName, env: Any) -> bool:
    """Whether no window of the app is open.

    Args:
        app: "terminal" or "editor".
    """
    return not env.app_windows(app)


@action(env_name=ENV_NAME)
def active_window_is(app: AppName, title_contains: Annotated[str, Field(max_length=200)] = "",
                     env: Any = None) -> bool:
    """Whether the focused window belongs to the app (and its title contains a fragment).

    Args:
        app: "terminal" or "editor".
        title_contains: a fragment the focused window's title must contain ("" = any).
    """
    return env.active_app() == app and title_contains in env.active_title()


@action(env_name=ENV_NAME)
def setting_equals(schema_id: Annotated[str, Field(pattern=r"^[A-Za-z0-9.\-]{1,200}$")],
                   key: Annotated[str, Field(pattern=r"^[a-z0-9\-]{1,100}$")],
                   value: Annotated[str, Field(max_length=200)], env: Any) -> bool:
    """Whether a GSettings key of the env's settings store has a value (GVariant text form).

    Args:
        schema_id: GSettings schema id.
        key: key name.
        value: expected value, e.g. "true".
    """
    return env.get_setting(schema_id, key) == value


Mode = Annotated[str, Field(pattern=r"^[0-7]{3,4}$")]
Names = Annotated[list[RelPath], Field(max_length=100)]


@action(env_name=ENV_NAME)
def file_mode_is(path: RelPath, mode: Mode, env: Any) -> bool:
    """Whether a file or directory has exactly these permission bits.

    Args:
        path: path relative to the work directory.
        mode: octal permission bits, e.g. "644".
    """
    return env.mode(path) == int(mode, 8)


@action(env_name=ENV_NAME)
def symlink_points_to(path: RelPath, target: RelPath, env: Any) -> bool:
    """Whether a path is a symbolic link whose target (as written in the link) is ``target``.

    Args:
        path: the link, relative to the work directory.
        target: the expected link text; a trailing "/" and a leading "./" are ignored.
    """
    found = env.link_target(path)
    return found is not None and found.removeprefix("./").rstrip("/") == target.removeprefix("./").rstrip("/")


@action(env_name=ENV_NAME)
def dir_listing_equals(path: RelPath, names: Names, env: Any) -> bool:
    """Whether a directory holds exactly these entries (files and directories, any order).

    Args:
        path: directory relative to the work directory ("." for the work directory itself).
        names: the expected entry names.
    """
    return env.listing(path) == sorted(names)


@action(env_name=ENV_NAME)
def archive_contains(path: RelPath, names: Names, env: Any) -> bool:
    """Whether a tar archive (any compression) holds exactly these files, by their base names.

    Args:
        path: the archive, relative to the work directory.
        names: the expected file names (directories in the archive are not compared).
    """
    members = env.archive_members(path)
    return members is not None and sorted(PurePosixPath(m).name for m in members) == sorted(names)


@action(env_name=ENV_NAME)
def clipboard_equals(text: Annotated[str, Field(max_length=10_000)], env: Any) -> bool:
    """Whether the X clipboard holds this text (ignoring CRLF vs LF and trailing newlines).

    Args:
        text: the expected clipboard content.
    """
    content = env.clipboard()
    return content is not None and _norm(content) == _norm(text)


@action(env_name=ENV_NAME)
def window_in_region(app: AppName, left: Coord, top: Coord, right: Coord, bottom: Coord,
                     env: Any) -> bool:
    """Whether the centre of a window of the app lies in a region of the screen.

    Args:
        app: "terminal" or "editor".
        left: left edge of the region, as a fraction of the screen width.
        top: top edge of the region, as a fraction of the screen height.
        right: right edge of the region.
        bottom: bottom edge of the region.
    """
    return any(left <= x + w / 2 <= right and top <= y + h / 2 <= bottom for x, y, w, h in env.window_rects(app))


@action(env_name=ENV_NAME)
def window_size_near(app: AppName, width: Coord, height: Coord,
                     tolerance: Annotated[float, Field(gt=0.0, le=0.5)] = 0.06, env: Any = None) -> bool:
    """Whether a window of the app has about this size (fractions of the screen).

    Args:
        app: "terminal" or "editor".
        width: expected width, as a fraction of the screen width.
        height: expected height, as a fraction of the screen height.
        tolerance: largest accepted difference of each, as a fraction of the screen.
    """
    return any(abs(w - width) <= tolerance and abs(h - height) <= tolerance for _, _, w, h in env.window_rects(app))


@action(env_name=ENV_NAME)
def window_rect_near(app: AppName, x: Coord, y: Coord, width: Coord, height: Coord,
                     tolerance: Annotated[float, Field(gt=0.0, le=0.5)] = 0.1, env: Any = None) -> bool:
    """Whether a window of the app has about this position and size (fractions of the screen).

    Args:
        app: "terminal" or "editor".
        x: expected left edge, as a fraction of the screen width.
        y: expected top edge, as a fraction of the screen height.
        width: expected width, as a fraction of the screen width.
        height: expected height, as a fraction of the screen height.
        tolerance: largest accepted difference of each, as a fraction of the screen.
    """
    want = (x, y, width, height)
    return any(all(abs(a - b) <= tolerance for a, b in zip(rect, want)) for rect in env.window_rects(app))


@action(env_name=ENV_NAME)
def window_count_is(app: AppName, count: Annotated[int, Field(ge=0, le=20)], env: Any) -> bool:
    """Whether exactly ``count`` windows of the app are open.

    Args:
        app: "terminal" or "editor".
        count: the expected number of windows.
    """
    return len(env.app_windows(app)) == count


PROBE_ACTIONS: tuple[Action, ...] = (
    file_exists, dir_exists, path_missing, file_text_equals, file_contains, file_is_executable,
    window_open, app_closed, active_window_is, setting_equals,
    file_mode_is, symlink_points_to, dir_listing_equals, archive_contains, clipboard_equals,
    window_in_region, window_size_near, window_rect_near, window_count_is,
)


# --------------------------------------------------------------------------- episode probes
@action(env_name=ENV_NAME)
def declared_infeasible(mentions: Annotated[list[Annotated[str, Field(min_length=1, max_length=200)]],
                                            Field(max_length=10)], env: Any) -> bool:
    """Whether the agent declared the task infeasible with a reason naming every fragment.

    Args:
        mentions: fragments the reason must contain (case-insensitive), e.g. the missing file.
    """
    reason = env.declared_reason
    return reason is not None and all(m.lower() in reason.lower() for m in mentions)


#: Checks the gym env answers itself (``env`` is the gym env, not a machine).
EPISODE_PROBES: tuple[Action, ...] = (declared_infeasible,)


# --------------------------------------------------------------------------- observations
@action(env_name=ENV_NAME)
def screenshot(width: Annotated[int, Field(ge=16, le=4096)] = 160,
               height: Annotated[int, Field(ge=16, le=4096)] = 100, env: Any = None) -> np.ndarray:
    """The screen as an RGB array of shape (height, width, 3), resized to the given size.

    Args:
        width: width of the returned image in pixels.
        height: height of the returned image in pixels.
    """
    return env.screenshot(width, height)


@action(env_name=ENV_NAME)
def active_window_title(env: Any) -> str:
    """Title of the focused window ("" if none)."""
    return env.active_title()


@action(env_name=ENV_NAME)
def window_titles(env: Any) -> list[str]:
    """Titles of the open windows, in the window manager's stacking order."""
    return env.window_titles()


@action(env_name=ENV_NAME)
def machine_info(env: Any) -> dict:
    """Screen size, work directory and launchable apps of the machine."""
    return env.info()


@action(env_name=ENV_NAME)
def pressable_keys(env: Any) -> list[str]:
    """The key names this display's keyboard can press (the key enum less the missing keys)."""
    missing = set(env.desktop.missing_keys(list(KEYBOARD_KEYS)))
    return [k for k in KEYBOARD_KEYS if k not in missing]


OBSERVATION_ACTIONS: tuple[Action, ...] = (screenshot, active_window_title, window_titles, machine_info,
                                           pressable_keys)

#: Every action a desktop machine (and so ``crab-gym serve``) accepts, by name.
MACHINE_ACTIONS: dict[str, Action] = {
    a.name: a for a in (*AGENT_ACTIONS, *SETUP_ACTIONS, *PROBE_ACTIONS, *OBSERVATION_ACTIONS)
}
assert len(MACHINE_ACTIONS) == len(AGENT_ACTIONS) + len(SETUP_ACTIONS) + len(PROBE_ACTIONS) + len(OBSERVATION_ACTIONS)
