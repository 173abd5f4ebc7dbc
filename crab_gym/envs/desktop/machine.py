"""The desktop machine: a display, a work directory, and the operations tasks are made of.

A :class:`DesktopMachine` is what the desktop Actions run against (it is injected as their
kept ``env`` parameter), in this process or behind ``crab-gym serve``. It knows nothing of
Gymnasium. Platform-specific work is delegated to :mod:`crab_gym.envs.desktop.x11`; this
module only adds the work directory (every file a task touches lives under it, and paths
can never leave it) and a private settings store.
"""

from __future__ import annotations

import os
import shutil
import stat
import tarfile
import tempfile
import threading
import time
import weakref
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from crab_gym._optional import require as require_extra
from crab_gym.envs.desktop import x11

#: A file in a user-given work directory that marks it as ours (so reset may empty it).
WORKDIR_MARKER = ".crab-desktop-workdir"
#: Largest file a probe reads or a setup step writes (bytes).
MAX_FILE_BYTES = 1 << 20


class PathOutsideWorkdirError(ValueError):
    """A task path that is absolute or climbs out of the work directory."""


class DesktopMachine:
    """A desktop the desktop Actions drive.

    Args:
        display: ``None`` starts a private Xvfb display with openbox; a string such as ``":0"``
            attaches to that existing display (never stopped by :meth:`close`).
        screen_size: ``(width, height)`` of a started display.
        workdir: directory the tasks work in. ``None``: a fresh temporary directory. A given
            directory must be empty or already marked as a crab_gym work directory, because
            every reset empties it.
        xauthority: cookie file for an attached display (default ``$XAUTHORITY``).
    """

    def __init__(self, display: str | None = None, *, screen_size: tuple[int, int] = (1024, 640),
                 workdir: str | os.PathLike | None = None, xauthority: str | None = None) -> None:
        self._lock = threading.RLock()
        self._own_workdir = workdir is None
        if workdir is None:
            self.workdir = Path(tempfile.mkdtemp(prefix="crab-desktop-work-")).resolve()
        else:
            self.workdir = Path(workdir).expanduser().resolve()
            self.workdir.mkdir(parents=True, exist_ok=True)
            entries = [p.name for p in self.workdir.iterdir()]
            if entries and WORKDIR_MARKER not in entries:
                raise ValueError(
                    f"workdir {self.workdir} is not empty and not a crab_gym work directory; "
                    "every reset empties it, so give an empty directory"
                )
        (self.workdir / WORKDIR_MARKER).touch()
        self.state_dir = Path(tempfile.mkdtemp(prefix="crab-desktop-state-"))
        # Removes our folders on close(), and also when an unclosed machine (an env dropped
        # without close()) is garbage-collected or the interpreter exits.
        self._finalizer = weakref.finalize(self, _remove_dirs, self.state_dir,
                                           self.workdir if self._own_workdir else None)
        try:
            self.app_env = x11.sandbox_env(self.state_dir)
            if display is None:
                self.desktop = x11.XDesktop.start(*screen_size)
            else:
                self.desktop = x11.XDesktop.attach(display, xauthority=xauthority)
        except BaseException:
            self._finalizer()
            raise
        self._closed = False

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Stop what we started; remove our temporary directories. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self.desktop.close()
            self._finalizer()

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> DesktopMachine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def info(self) -> dict[str, Any]:
        """What a client needs to know: screen size, work directory, launchable apps."""
        return {"width": self.desktop.width, "height": self.desktop.height,
                "workdir": str(self.workdir), "display": self.desktop.display,
                "apps": sorted(x11.APPS)}

    # ------------------------------------------------------------------ reset
    def reset(self) -> None:
        """Known state: no launched apps, neutral input, empty work dir, default settings."""
        with self._lock:
            self.desktop.kill_apps()
            self.desktop.clear_clipboard()
            self.desktop.reset_input()
            for entry in self.workdir.iterdir():
                if entry.name == WORKDIR_MARKER:
                    continue
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry, ignore_errors=True)
                else:
                    entry.unlink(missing_ok=True)
            shutil.rmtree(self.state_dir, ignore_errors=True)
            self.state_dir.mkdir(parents=True)
            self.app_env = x11.sandbox_env(self.state_dir)

    # ------------------------------------------------------------------ paths and files
    def resolve(self, path: str) -> Path:
        """A task path (relative, inside the work directory) as an absolute path."""
        if not isinstance(path, str) or not path.strip():
            raise PathOutsideWorkdirError("path must be a non-empty relative path")
        pure = PurePosixPath(path)
        if pure.is_absolute() or ".." in pure.parts or "\x00" in path:
            raise PathOutsideWorkdirError(f"path {path!r} must be relative to the work directory, without '..'")
        full = (self.workdir / pure).resolve()
        if full != self.workdir and self.workdir not in full.parents:
            raise PathOutsideWorkdirError(f"path {path!r} leads outside the work directory")
        return full

    def write_file(self, path: str, text: str, executable: bool = False) -> None:
        data = text.encode("utf-8")
        if len(data) > MAX_FILE_BYTES:
            raise ValueError(f"file text is larger than {MAX_FILE_BYTES} bytes")
        full = self.resolve(path)
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_bytes(data)
        if executable:
            full.chmod(full.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)

    def make_dirs(self, path: str) -> None:
        self.resolve(path).mkdir(parents=True, exist_ok=True)

    def read_text(self, path: str) -> str | None:
        """The file's text, or ``None`` if it is not a readable regular file."""
        full = self.resolve(path)
        try:
            if not full.is_file() or full.stat().st_size > MAX_FILE_BYTES:
                return None
            return full.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def is_file(self, path: str) -> bool:
        return self.resolve(path).is_file()

    def is_dir(self, path: str) -> bool:
        return self.resolve(path).is_dir()

    def exists(self, path: str) -> bool:
        full = self.resolve(path)
        return full.exists() or full.is_symlink()

    def is_executable(self, path: str) -> bool:
        full = self.resolve(path)
        return full.is_file() and os.access(full, os.X_OK)

    def mode(self, path: str) -> int | None:
        """Permission bits of a file or directory (``0o644``), or None if nothing is there."""
        full = self.resolve(path)
        return stat.S_IMODE(full.stat().st_mode) if full.exists() else None

    def link_target(self, path: str) -> str | None:
        """What a symbolic link in the work directory points to, or None if it is no link."""
        full = self.workdir / PurePosixPath(path)
        self.resolve(path)  # refuses paths outside the work directory
        return os.readlink(full) if full.is_symlink() else None

    def listing(self, path: str) -> list[str] | None:
        """Sorted names in a directory (the work-dir marker left out), or None."""
        full = self.resolve(path)
        if not full.is_dir():
            return None
        return sorted(p.name for p in full.iterdir() if p.name != WORKDIR_MARKER)

    def archive_members(self, path: str) -> list[str] | None:
        """Sorted regular-file members of a tar archive (names without "./"), or None."""
        full = self.resolve(path)
        try:
            with tarfile.open(full) as tar:
                return sorted(m.name.removeprefix("./") for m in tar.getmembers() if m.isfile())
        except (OSError, tarfile.TarError):
            return None

    # ------------------------------------------------------------------ apps and windows
    def launch(self, app: str, file: str = "", rect: tuple[float, float, float, float] | None = None) -> str:
        """Open an app (optionally on a work-dir file), place it, focus it; its window title."""
        with self._lock:
            args = []
            if file:
                if not x11.APPS[app].accepts_file:
                    raise ValueError(f"app '{app}' does not open files")
                args.append(str(self.resolve(file)))
            window = self.desktop.launch(app, args, cwd=self.workdir, env_extra=self.app_env)
            if rect is not None:
                self.desktop.place(window, *rect)
            self.desktop.activate(window)
            return window.title

    def app_windows(self, app: str) -> list[x11.Window]:
        cls = x11.APPS[app].wm_class
        return [w for w in self.desktop.windows() if w.app_class == cls]

    def focus(self, app: str) -> None:
        windows = self.app_windows(app)
        if not windows:
            raise ValueError(f"no '{app}' window is open")
        self.desktop.activate(windows[-1])

    def active_title(self) -> str:
        win = self.desktop.active_window()
        return win.title if win is not None else ""

    def active_app(self) -> str:
        """The :data:`x11.APPS` name of the focused window's app, or ``""``."""
        win = self.desktop.active_window()
        if win is None:
            return ""
        for name, app in x11.APPS.items():
            if win.app_class == app.wm_class:
                return name
        return ""

    def window_rects(self, app: str) -> list[tuple[float, float, float, float]]:
        """Each window of the app as ``(x, y, width, height)`` fractions of the screen."""
        w, h = self.desktop.width, self.desktop.height
        return [(r[0] / w, r[1] / h, r[2] / w, r[3] / h) for r in (win.rect for win in self.app_windows(app))]

    # ------------------------------------------------------------------ clipboard
    def clipboard(self) -> str | None:
        return self.desktop.clipboard()

    def set_clipboard(self, text: str) -> None:
        with self._lock:
            self.desktop.set_clipboard(text)

    def window_titles(self) -> list[str]:
        return [w.title for w in self.desktop.windows()]

    # ------------------------------------------------------------------ settings
    def get_setting(self, schema: str, key: str) -> str:
        return self.desktop.gsettings(["get", schema, key], self.app_env)

    def set_setting(self, schema: str, key: str, value: str) -> None:
        self.desktop.gsettings(["set", schema, key, value], self.app_env)

    # ------------------------------------------------------------------ observation
    def screenshot(self, width: int | None = None, height: int | None = None) -> np.ndarray:
        """The screen as RGB ``(height, width, 3)`` uint8, resized if a size is given."""
        frame = self.desktop.screenshot()
        if width is None or height is None or (frame.shape[1], frame.shape[0]) == (width, height):
            return frame
        return resize(frame, width, height)

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


def _remove_dirs(state_dir: Path, own_workdir: Path | None) -> None:
    """The machine's finalizer: remove its settings folder and the work directory it made."""
    shutil.rmtree(state_dir, ignore_errors=True)
    if own_workdir is not None:
        shutil.rmtree(own_workdir, ignore_errors=True)


def resize(frame: np.ndarray, width: int, height: int) -> np.ndarray:
    """Resize an RGB frame; area-averaging (Pillow's BOX) keeps thin text strokes visible."""
    Image = require_extra("PIL.Image", "desktop", package="pillow")
    img = Image.fromarray(frame).resize((int(width), int(height)), Image.Resampling.BOX)
    return np.asarray(img, dtype=np.uint8)
