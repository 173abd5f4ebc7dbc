"""Everything that is specific to an X11 desktop, in one module.

This is the only place that knows about Xvfb, the window manager, ``xdotool``/``wmctrl``,
the applications the tasks use, GSettings and pyautogui's X11 backend. A Windows or macOS
port would replace this module and keep the rest of :mod:`crab_gym.envs.desktop`.

Why some of it looks unusual:

* pyautogui opens its X connection **at import time** from ``$DISPLAY`` and builds its
  keyboard map from it. We import it lazily (the display must exist first) and re-point its
  X11 backend whenever a different :class:`XDesktop` drives it, so several displays can live
  in one process (``check_env`` starts one per render mode).
* A display we start is protected by a random MIT-MAGIC-COOKIE (``-auth``), listens on no
  TCP port, and runs openbox with our own minimal configuration: one workspace, no root
  menu, no iconify button (there is no panel to restore a window from), so random agent
  input cannot wedge the desktop.
* Applications get a private ``XDG_CONFIG_HOME`` with GSettings' keyfile backend, so the
  "change a setting" tasks never touch the user's real settings, even on an attached display.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from crab_gym._optional import require as require_extra
from crab_gym._optional import require_installed

#: program -> Debian package that provides it.
APT_PACKAGES: dict[str, str] = {
    "Xvfb": "xvfb",
    "xauth": "xauth",
    "openbox": "openbox",
    "xdotool": "xdotool",
    "wmctrl": "wmctrl",
    "xterm": "xterm",
    "mousepad": "mousepad",
    "xclip": "xclip",
    "gsettings": "libglib2.0-bin",
}

#: Everything ``scripts/install_desktop_deps.sh`` installs (fonts included).
ALL_APT_PACKAGES: tuple[str, ...] = (*dict.fromkeys(APT_PACKAGES.values()), "xfonts-base")


#: Python modules of the ``desktop`` extra a local desktop needs -> their PyPI names (mss is
#: optional: screenshots fall back to python-xlib).
EXTRA_MODULES: dict[str, str] = {"pyautogui": "pyautogui", "Xlib": "python-xlib", "PIL": "pillow"}


def require_desktop_extra() -> None:
    """Raise :class:`~crab_gym._optional.MissingExtraError` (naming ``pip install
    "crab_gym[desktop]"``) if a module a local desktop needs is missing; imports nothing."""
    for module, package in EXTRA_MODULES.items():
        require_installed(module, "desktop", package=package)


class MissingSystemPackageError(RuntimeError):
    """A program the desktop needs is not installed; says which package and how to get it."""

    def __init__(self, program: str, package: str) -> None:
        self.program = program
        self.package = package
        super().__init__(
            f"'{program}' was not found on PATH: install the Debian package '{package}' "
            f"(sudo apt-get update && sudo apt-get install -y --no-install-recommends {package}), "
            f"or run scripts/install_desktop_deps.sh to install every desktop dependency"
        )


class DesktopError(RuntimeError):
    """The X desktop did not behave (display did not start, window never appeared, ...)."""


def require(program: str) -> str:
    """Path of ``program``, or :class:`MissingSystemPackageError` naming its package."""
    path = shutil.which(program)
    if path is None:
        raise MissingSystemPackageError(program, APT_PACKAGES.get(program, program.lower()))
    return path


# --------------------------------------------------------------------------- applications
@dataclass(frozen=True)
class App:
    """An application the tasks may launch, from a Debian package."""

    name: str
    argv: tuple[str, ...]
    wm_class: str  # lower-case WM_CLASS instance name, how we find its window
    accepts_file: bool


#: The applications tasks can launch. Launching is only ever by one of these names.
APPS: dict[str, App] = {
    # bash without rc files and a fixed prompt: what the agent sees does not depend on the host.
    "terminal": App(
        "terminal",
        ("xterm", "-T", "Terminal", "-fa", "Monospace", "-fs", "11", "-bg", "white", "-fg", "black",
         "-e", "bash", "--noprofile", "--norc", "-i"),
        "xterm",
        False,
    ),
    "editor": App("editor", ("mousepad",), "mousepad", True),
}

_OPENBOX_RC = """<?xml version="1.0" encoding="UTF-8"?>
<openbox_config xmlns="http://openbox.org/3.4/rc">
  <resistance><strength>0</strength><screen_edge_strength>0</screen_edge_strength></resistance>
  <focus><focusNew>yes</focusNew><followMouse>no</followMouse></focus>
  <placement><policy>Smart</policy><center>no</center></placement>
  <theme><name>Clearlooks</name><titleLayout>LC</titleLayout><keepBorder>yes</keepBorder></theme>
  <desktops><number>1</number><firstdesk>1</firstdesk></desktops>
  <keyboard>
    <keybind key="A-Tab"><action name="NextWindow"><dialog>none</dialog></action></keybind>
    <keybind key="A-F4"><action name="Close"/></keybind>
  </keyboard>
  <mouse>
    <dragThreshold>1</dragThreshold>
    <doubleClickTime>400</doubleClickTime>
    <context name="Frame">
      <mousebind button="Left" action="Press"><action name="Focus"/><action name="Raise"/></mousebind>
    </context>
    <context name="Client">
      <mousebind button="Left" action="Press"><action name="Focus"/><action name="Raise"/></mousebind>
      <mousebind button="Middle" action="Press"><action name="Focus"/><action name="Raise"/></mousebind>
      <mousebind button="Right" action="Press"><action name="Focus"/><action name="Raise"/></mousebind>
    </context>
    <context name="Titlebar">
      <mousebind button="Left" action="Press"><action name="Focus"/><action name="Raise"/></mousebind>
      <mousebind button="Left" action="Drag"><action name="Move"/></mousebind>
    </context>
    <context name="Close">
      <mousebind button="Left" action="Press"><action name="Focus"/><action name="Raise"/></mousebind>
      <mousebind button="Left" action="Click"><action name="Close"/></mousebind>
    </context>
  </mouse>
  <menu><file>{menu}</file></menu>
</openbox_config>
"""

_OPENBOX_MENU = """<?xml version="1.0" encoding="UTF-8"?>
<openbox_menu xmlns="http://openbox.org/3.4/menu"><menu id="root-menu" label="-"></menu></openbox_menu>
"""


@dataclass(frozen=True)
class Window:
    """One top-level window, as the window manager lists it."""

    id: int
    pid: int
    wm_class: str  # "instance.Class", e.g. "xterm.XTerm"
    title: str
    #: ``(x, y, width, height)`` in pixels as the window manager reports it (0s if unknown).
    rect: tuple[int, int, int, int] = (0, 0, 0, 0)

    @property
    def app_class(self) -> str:
        """The lower-case WM_CLASS instance name ("xterm", "mousepad")."""
        return self.wm_class.split(".", 1)[0].lower()


# --------------------------------------------------------------------------- our X connections
#: Each XDesktop's python-xlib connection, by its key. Kept out of the object, whose
#: attributes are its state: a connection's byte counters change on every read.
_XLIB: dict[str, Any] = {}


def _close_xlib(key: str) -> None:
    connection = _XLIB.pop(key, None)
    if connection is not None:
        with contextlib.suppress(Exception):
            connection.close()


# --------------------------------------------------------------------------- SIGTERM
_SIGTERM_LOCK = threading.Lock()
_SIGTERM_STATE: dict[str, Any] = {"displays": 0, "handler": None}


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    """SIGTERM -> ``SystemExit(143)``: Python shuts down normally, so the finalizers stop
    Xvfb, openbox and the apps and remove the temporary folders (the default action would
    end the process on the spot and leave them all behind)."""
    signal.signal(signum, signal.SIG_IGN)  # a second SIGTERM must not interrupt the cleanup
    raise SystemExit(128 + signum)


def _hold_sigterm() -> None:
    """A display of ours started: while any runs, SIGTERM exits through Python's shutdown.
    Only where nobody chose a SIGTERM handler (it is the default) and in the main thread."""
    with _SIGTERM_LOCK:
        _SIGTERM_STATE["displays"] += 1
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _exit_on_sigterm)
            _SIGTERM_STATE["handler"] = _exit_on_sigterm


def _drop_sigterm() -> None:
    """A display of ours stopped: the last one puts back the default SIGTERM action."""
    with _SIGTERM_LOCK:
        _SIGTERM_STATE["displays"] = max(0, _SIGTERM_STATE["displays"] - 1)
        if _SIGTERM_STATE["displays"] == 0 and _SIGTERM_STATE["handler"] is not None and \
                threading.current_thread() is threading.main_thread():
            if signal.getsignal(signal.SIGTERM) is _SIGTERM_STATE["handler"]:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
            _SIGTERM_STATE["handler"] = None


# --------------------------------------------------------------------------- pyautogui binding
_PYAUTOGUI_LOCK = threading.RLock()
_pyautogui: Any = None
_bound_to: str | None = None  # the XDesktop.key pyautogui's backend is connected to


@contextlib.contextmanager
def _x_environ(display: str, xauthority: str | None) -> Iterator[None]:
    """Temporarily point ``$DISPLAY``/``$XAUTHORITY`` at a display (libraries read them)."""
    saved = {k: os.environ.get(k) for k in ("DISPLAY", "XAUTHORITY")}
    os.environ["DISPLAY"] = display
    if xauthority:
        os.environ["XAUTHORITY"] = xauthority
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _pyautogui_for(display: str, xauthority: str | None, key: str | None = None) -> Any:
    """pyautogui, with its X11 backend connected to ``display`` (caller holds the lock).

    ``key`` identifies one XDesktop: a display number can be reused by a new server after
    an old one stopped, and a connection to the old one must not be kept.
    """
    global _pyautogui, _bound_to
    key = key or display
    if _pyautogui is None or _bound_to != key:
        with _x_environ(display, xauthority):
            if _pyautogui is None:
                # Imported only now: pyautogui connects to $DISPLAY when imported.
                _pyautogui = require_extra("pyautogui", "desktop")
            else:
                # Reconnect the backend and rebuild its keyboard map for this display.
                importlib.reload(_pyautogui.platformModule)
        _pyautogui.PAUSE = 0.0
        _pyautogui.FAILSAFE = False  # a corner of a virtual screen is not an emergency
        _pyautogui.MINIMUM_DURATION = 0.0
        _fix_shifted_keys(_pyautogui)
        _bound_to = key
    return _pyautogui


def _fix_shifted_keys(gui: Any) -> None:
    """Map every character pyautogui types with Shift to a key that gives it *with* Shift.

    pyautogui presses Shift for "<" but maps it to the first key whose keysym list holds
    "<": the extra key of a pc105 keyboard (keycode 94), whose *unshifted* symbol is "<"; with
    Shift that key types ">". Latin-1 keysyms equal their code points, so the key to use is
    the one listing the character at index 1 (the shifted level).
    """
    module = gui.platformModule
    display = getattr(module, "_display", None)
    if display is None:
        return
    for char in [c for c in module.keyboardMapping if len(c) == 1 and gui.isShiftCharacter(c)]:
        shifted = [code for code, index in display.keysym_to_keycodes(ord(char)) if index == 1]
        if shifted:
            module.keyboardMapping[char] = shifted[0]


def _unbind(key: str) -> None:
    """Forget pyautogui's connection if it is to the XDesktop ``key`` (being closed)."""
    global _bound_to
    with _PYAUTOGUI_LOCK:
        if _bound_to == key:
            _bound_to = None


# --------------------------------------------------------------------------- the desktop
class XDesktop:
    """A running X display: ours (Xvfb + openbox) or an existing one we attach to.

    Use :meth:`start` or :meth:`attach`. Every method is safe to call from several threads
    (the server runs requests in a thread pool): one lock serialises them.
    """

    def __init__(self, display: str, *, xauthority: str | None, owned: bool,
                 processes: Sequence[subprocess.Popen] = (), tmpdir: str | None = None) -> None:
        self.display = display
        self.xauthority = xauthority
        self.owned = owned
        self._server_procs = list(processes)  # Xvfb, openbox: stopped by close() when owned
        self._apps: list[subprocess.Popen] = []  # launched applications: stopped by kill_apps()
        self._tmpdir = tmpdir
        self._lock = threading.RLock()
        self._closed = False
        self.key = f"{display}#{secrets.token_hex(8)}"  # unique even if the number is reused
        # What close() must undo, also run if this object is garbage-collected unclosed or
        # the interpreter exits: it holds no reference to self (weakref.finalize, not __del__).
        self._finalizer = weakref.finalize(
            self, _release, self._server_procs if owned else [], self._apps, tmpdir, self.key
        )
        self._mss: Any = None
        self.width, self.height = self._query_size()

    # ------------------------------------------------------------------ lifecycle
    @classmethod
    def start(cls, width: int = 1024, height: int = 640, *, window_manager: bool = True,
              timeout: float = 10.0) -> XDesktop:
        """Start a private Xvfb display (cookie-protected, no TCP) with openbox on it."""
        require_desktop_extra()  # before anything is started
        xvfb = require("Xvfb")
        xauth = require("xauth")
        for program in ("xdotool", "wmctrl") + (("openbox",) if window_manager else ()):
            require(program)
        if not (16 <= width <= 8192 and 16 <= height <= 8192):
            raise ValueError(f"screen size must be within 16..8192 pixels, got {width}x{height}")
        tmpdir = tempfile.mkdtemp(prefix="crab-desktop-x-")
        auth_file = os.path.join(tmpdir, "Xauthority")
        Path(auth_file).touch(mode=0o600)
        cookie = secrets.token_hex(16)
        read_fd, write_fd = os.pipe()
        procs: list[subprocess.Popen] = []
        try:
            xvfb_proc = subprocess.Popen(
                [xvfb, "-displayfd", str(write_fd), "-screen", "0", f"{width}x{height}x24",
                 "-auth", auth_file, "-nolisten", "tcp", "-noreset"],
                pass_fds=(write_fd,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, start_new_session=True,
            )
            procs.append(xvfb_proc)
            os.close(write_fd)
            write_fd = -1
            number = _read_display_number(read_fd, xvfb_proc, timeout)
            display = f":{number}"
            subprocess.run([xauth, "-q", "-f", auth_file, "add", display, ".", cookie],
                           check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=timeout)
            if window_manager:
                rc = Path(tmpdir, "rc.xml")
                menu = Path(tmpdir, "menu.xml")
                menu.write_text(_OPENBOX_MENU)
                rc.write_text(_OPENBOX_RC.replace("{menu}", str(menu)))
                env = _child_env(display, auth_file)
                procs.append(subprocess.Popen(
                    [require("openbox"), "--config-file", str(rc)], env=env,
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    start_new_session=True,
                ))
            _watchdog([proc.pid for proc in procs], tmpdir)
            desk = cls(display, xauthority=auth_file, owned=True, processes=procs, tmpdir=tmpdir)
            _hold_sigterm()
            desk.set_background()
            if window_manager:
                desk._wait_for(lambda: desk._wm_running(), timeout, "the window manager (openbox)")
            return desk
        except BaseException:
            for proc in reversed(procs):
                _stop(proc)
            shutil.rmtree(tmpdir, ignore_errors=True)
            raise
        finally:
            os.close(read_fd)
            if write_fd >= 0:
                os.close(write_fd)

    @classmethod
    def attach(cls, display: str | None = None, *, xauthority: str | None = None) -> XDesktop:
        """Use an existing display (default ``$DISPLAY``); it is never stopped by :meth:`close`."""
        display = display or os.environ.get("DISPLAY")
        if not display:
            raise DesktopError("no display to attach to: pass display=':0' or set $DISPLAY")
        require_desktop_extra()
        for program in ("xdotool", "wmctrl"):
            require(program)
        xauthority = xauthority or os.environ.get("XAUTHORITY")
        desk = cls(display, xauthority=xauthority, owned=False)
        return desk

    def close(self) -> None:
        """Stop launched apps; if we started the display, stop openbox and Xvfb. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self.kill_apps()
            _close_xlib(self.key)
            if self._mss:
                with contextlib.suppress(Exception):
                    self._mss.close()
            self._mss = None
            self._finalizer()  # stop Xvfb and openbox (when ours), remove the temp folder

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> XDesktop:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ helpers
    def child_env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """Environment for a program that talks to this display."""
        env = _child_env(self.display, self.xauthority)
        env.update(extra or {})
        return env

    def _run(self, argv: Sequence[str], *, check: bool = True, timeout: float = 10.0,
             env_extra: Mapping[str, str] | None = None) -> subprocess.CompletedProcess:
        if self._closed:
            raise DesktopError("the desktop is closed")
        proc = subprocess.run(list(argv), env=self.child_env(env_extra), capture_output=True,
                              stdin=subprocess.DEVNULL, timeout=timeout)
        if check and proc.returncode != 0:
            raise DesktopError(
                f"{argv[0]} failed ({proc.returncode}): {proc.stderr.decode(errors='replace').strip()}"
            )
        return proc

    def _x(self) -> Any:
        """Our own python-xlib connection (screenshots, size, keyboard LEDs)."""
        connection = _XLIB.get(self.key)
        if connection is None:
            Display = require_extra("Xlib.display", "desktop", package="python-xlib").Display

            with _PYAUTOGUI_LOCK, _x_environ(self.display, self.xauthority):
                try:
                    connection = _XLIB[self.key] = Display(self.display)
                except Exception as exc:
                    raise DesktopError(f"cannot connect to X display {self.display}: {exc}") from exc
        return connection

    def _query_size(self) -> tuple[int, int]:
        screen = self._x().screen()
        return int(screen.width_in_pixels), int(screen.height_in_pixels)

    def _wait_for(self, predicate: Any, timeout: float, what: str, poll: float = 0.02) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise DesktopError(f"timed out after {timeout:.0f}s waiting for {what} on {self.display}")
            time.sleep(poll)

    def _wm_running(self) -> bool:
        return self._run([require("wmctrl"), "-m"], check=False).returncode == 0

    # ------------------------------------------------------------------ observation
    def screenshot(self) -> np.ndarray:
        """The whole screen as an ``(height, width, 3)`` uint8 RGB array."""
        with self._lock:
            if self._closed:
                raise DesktopError("the desktop is closed")
            grabber = self._grabber()
            if grabber is not None:
                shot = grabber.grab({"left": 0, "top": 0, "width": self.width, "height": self.height})
                bgra = np.frombuffer(shot.bgra, dtype=np.uint8).reshape(shot.height, shot.width, 4)
            else:  # python-xlib fallback: correct but ~10x slower than mss
                X = require_extra("Xlib.X", "desktop", package="python-xlib")

                raw = self._x().screen().root.get_image(0, 0, self.width, self.height, X.ZPixmap, 0xFFFFFFFF)
                data = np.frombuffer(raw.data, dtype=np.uint8)
                bgra = data[: self.width * self.height * 4].reshape(self.height, self.width, 4)
            return np.ascontiguousarray(bgra[:, :, 2::-1])

    def _grabber(self) -> Any:
        """A cached mss screen grabber for this display (None if mss is unavailable)."""
        if self._mss is None:
            try:
                import mss  # noqa: PLC0415 - part of the desktop extra
            except ImportError:
                self._mss = False
                return None
            factory = getattr(mss, "MSS", None) or mss.mss
            with _PYAUTOGUI_LOCK, _x_environ(self.display, self.xauthority):
                self._mss = factory(display=self.display)
        return self._mss or None

    def windows(self) -> list[Window]:
        """Managed top-level windows, in the window manager's client-list order.

        Read over our own X connection (``_NET_CLIENT_LIST`` and each window's properties),
        not by running ``wmctrl -l``: observations and checks list windows several times per
        step, and a process per listing costs more than the rest of the step.
        """
        with self._lock:
            if self._closed:
                raise DesktopError("the desktop is closed")
            display = self._x()
            root = display.screen().root
            clients = root.get_full_property(self._atom("_NET_CLIENT_LIST"), 0)
            result = []
            for wid in clients.value if clients is not None else ():
                win = self._describe(display, root, int(wid))
                if win is not None:
                    result.append(win)
            return result

    def _atom(self, name: str) -> int:
        return self._x().intern_atom(name)

    def _describe(self, display: Any, root: Any, wid: int) -> Window | None:
        """One client window's pid, class, title and geometry (None if it just vanished)."""
        error = require_extra("Xlib.error", "desktop", package="python-xlib")
        window = display.create_resource_object("window", wid)
        try:
            pid = window.get_full_property(self._atom("_NET_WM_PID"), 0)
            wm_class = window.get_wm_class() or ("", "")
            name = window.get_full_property(self._atom("_NET_WM_NAME"), self._atom("UTF8_STRING"))
            title = name.value if name is not None else (window.get_wm_name() or "")
            geometry = window.get_geometry()
            origin = root.translate_coords(window, 0, 0)
        except error.XError:
            return None
        if isinstance(title, bytes):  # python-xlib decodes some versions' UTF8_STRING, not others
            title = title.decode("utf-8", errors="replace")
        return Window(wid, int(pid.value[0]) if pid is not None else 0, ".".join(wm_class), title,
                      (int(origin.x), int(origin.y), int(geometry.width), int(geometry.height)))

    def active_window(self) -> Window | None:
        """The focused window (``_NET_ACTIVE_WINDOW``), or ``None`` (e.g. only the root)."""
        with self._lock:
            if self._closed:
                raise DesktopError("the desktop is closed")
            display = self._x()
            root = display.screen().root
            active = root.get_full_property(self._atom("_NET_ACTIVE_WINDOW"), 0)
            wid = int(active.value[0]) if active is not None and len(active.value) else 0
            if not wid:
                return None
            for win in self.windows():
                if win.id == wid:
                    return win
            return self._describe(display, root, wid)

    # ------------------------------------------------------------------ windows and apps
    def launch(self, app: str, args: Sequence[str] = (), *, cwd: str | os.PathLike | None = None,
               env_extra: Mapping[str, str] | None = None, timeout: float = 10.0) -> Window:
        """Start one of :data:`APPS` and wait until its new window is mapped and managed."""
        if app not in APPS:
            raise ValueError(f"unknown app '{app}'; known: {sorted(APPS)}")
        spec = APPS[app]
        program = require(spec.argv[0])
        with self._lock:
            before = {w.id for w in self.windows()}
            proc = subprocess.Popen(
                [program, *spec.argv[1:], *args], cwd=cwd, env=self.child_env(env_extra),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            self._apps.append(proc)

            def new_window() -> Window | None:
                if proc.poll() is not None:
                    raise DesktopError(f"{spec.argv[0]} exited at start with code {proc.returncode}")
                for win in self.windows():
                    if win.id not in before and win.app_class == spec.wm_class:
                        return win
                return None

            return self._wait_for(new_window, timeout, f"the {app} window ({spec.argv[0]})")

    def place(self, window: Window, x: float, y: float, w: float, h: float) -> None:
        """Move/resize a window to a rectangle given as fractions of the screen."""
        px, py = int(round(x * self.width)), int(round(y * self.height))
        pw, ph = max(50, int(round(w * self.width))), max(50, int(round(h * self.height)))
        with self._lock:
            self._run([require("wmctrl"), "-i", "-r", hex(window.id), "-e", f"0,{px},{py},{pw},{ph}"])

    def activate(self, window: Window, timeout: float = 5.0) -> None:
        """Raise and focus a window, and wait until the window manager reports it active."""
        with self._lock:
            self._run([require("wmctrl"), "-i", "-a", hex(window.id)])
            self._wait_for(lambda: (a := self.active_window()) is not None and a.id == window.id,
                           timeout, f"window {window.title!r} to become active")

    def kill_apps(self) -> None:
        """Stop every application this object launched, and what those started (e.g. an
        editor opened from the terminal); never anyone else's windows."""
        with self._lock:
            _stop_apps(self._apps)
            if not self._closed:
                # Let the window manager unmap the windows before anyone lists them.
                with contextlib.suppress(DesktopError):
                    self._wait_for(lambda: not self._own_windows_left(), 3.0, "windows to close")

    def _own_windows_left(self) -> bool:
        return any(w.app_class in {a.wm_class for a in APPS.values()} and
                   w.pid in {p.pid for p in self._apps} for w in self.windows())

    def set_background(self, rgb: tuple[int, int, int] = (58, 110, 165)) -> None:
        """Paint the root window (openbox leaves it black), so empty screen is recognisable."""
        with self._lock:
            screen = self._x().screen()
            pixel = screen.default_colormap.alloc_color(*(c * 257 for c in rgb)).pixel
            screen.root.change_attributes(background_pixel=pixel)
            screen.root.clear_area(0, 0, 0, 0)
            self._x().sync()

    # ------------------------------------------------------------------ input (pyautogui)
    def _px(self, x: float, y: float) -> tuple[int, int]:
        return (int(round(min(max(x, 0.0), 1.0) * (self.width - 1))),
                int(round(min(max(y, 0.0), 1.0) * (self.height - 1))))

    @contextlib.contextmanager
    def _gui(self) -> Iterator[Any]:
        if self._closed:
            raise DesktopError("the desktop is closed")
        with self._lock, _PYAUTOGUI_LOCK:
            yield _pyautogui_for(self.display, self.xauthority, self.key)

    def click(self, x: float, y: float, *, button: str = "left", clicks: int = 1) -> None:
        px, py = self._px(x, y)
        with self._gui() as gui:
            gui.click(px, py, clicks=clicks, interval=0.05, button=button)

    def move_to(self, x: float, y: float) -> None:
        px, py = self._px(x, y)
        with self._gui() as gui:
            gui.moveTo(px, py)

    def drag_to(self, x: float, y: float) -> None:
        """Press the left button where the pointer is, move to (x, y), release."""
        px, py = self._px(x, y)
        with self._gui() as gui:
            gui.mouseDown(button="left")
            try:
                sx, sy = gui.position()
                for t in (0.25, 0.5, 0.75):  # intermediate motion so apps see a drag
                    gui.moveTo(int(sx + (px - sx) * t), int(sy + (py - sy) * t))
                    time.sleep(0.01)
                gui.moveTo(px, py)
            finally:
                gui.mouseUp(button="left")

    def scroll(self, clicks: int) -> None:
        with self._gui() as gui:
            gui.scroll(clicks)

    def missing_keys(self, keys: Sequence[str]) -> list[str]:
        """Key names this display's keyboard map has no key for (e.g. "volumeup" on Xvfb)."""
        with self._gui() as gui:
            mapping = gui.platformModule.keyboardMapping
            return [k for k in keys if not mapping.get(k.lower() if len(k) > 1 else k)]

    def key_press(self, key: str) -> None:
        with self._gui() as gui:
            gui.press(key)

    def hotkey(self, keys: Sequence[str]) -> None:
        with self._gui() as gui:
            gui.hotkey(*keys, interval=0.01)

    def write(self, text: str) -> None:
        """Type text; characters without a key on this keyboard are skipped."""
        with self._gui() as gui:
            mapping = gui.platformModule.keyboardMapping
            gui.write("".join(c for c in text if mapping.get(c)), interval=0.0)

    def pointer(self) -> tuple[int, int]:
        with self._gui() as gui:
            pos = gui.position()
            return int(pos[0]), int(pos[1])

    def reset_input(self) -> None:
        """Release modifiers and buttons and switch Caps/Num Lock off, so input is predictable."""
        with self._gui() as gui:
            for key in ("shift", "shiftright", "ctrl", "ctrlright", "alt", "altright", "win", "winright"):
                gui.keyUp(key)
            for button in ("left", "middle", "right"):
                gui.mouseUp(button=button)
            leds = int(self._x().get_keyboard_control().led_mask)
            if leds & 0x1:
                gui.press("capslock")
            if leds & 0x2:
                gui.press("numlock")
            gui.moveTo(self.width - 1, self.height - 1)

    # ------------------------------------------------------------------ clipboard (xclip)
    def set_clipboard(self, text: str, timeout: float = 5.0) -> None:
        """Own the CLIPBOARD selection with ``text`` (an xclip kept in the foreground and
        counted among the launched apps, so ``kill_apps`` and ``close`` stop it)."""
        with self._lock:
            proc = subprocess.Popen(
                [require("xclip"), "-selection", "clipboard", "-quiet", "-i"], env=self.child_env(),
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            self._apps.append(proc)
            assert proc.stdin is not None
            proc.stdin.write(text.encode("utf-8"))
            proc.stdin.close()
            self._wait_for(lambda: self.clipboard() == text, timeout, "xclip to own the clipboard")

    def clipboard(self) -> str | None:
        """The CLIPBOARD selection's text, or None when no one owns it."""
        with self._lock:
            try:
                out = self._run([require("xclip"), "-selection", "clipboard", "-o"], check=False, timeout=2.0)
            except subprocess.TimeoutExpired:
                return None
            return out.stdout.decode("utf-8", errors="replace") if out.returncode == 0 else None

    def clear_clipboard(self) -> None:
        """Leave the clipboard without an owner: take it (so any other owner, e.g. an xclip an
        agent started, lets go and exits), then stop our owner."""
        with self._lock:
            if self.clipboard() is None:
                return
            self.set_clipboard("")
            _stop(self._apps.pop())

    # ------------------------------------------------------------------ settings (GSettings)
    def gsettings(self, args: Sequence[str], env_extra: Mapping[str, str]) -> str:
        """Run ``gsettings ARGS`` with the app sandbox environment; its stdout."""
        out = self._run([require("gsettings"), *args], check=False, env_extra=env_extra)
        if out.returncode != 0:
            raise DesktopError(f"gsettings {' '.join(args)}: {out.stderr.decode(errors='replace').strip()}")
        return out.stdout.decode("utf-8", errors="replace").strip()


def sandbox_env(state_dir: str | os.PathLike) -> dict[str, str]:
    """Environment for launched apps: private XDG dirs, keyfile GSettings, plain bash."""
    base = Path(state_dir)
    dirs = {"XDG_CONFIG_HOME": base / "config", "XDG_DATA_HOME": base / "data",
            "XDG_CACHE_HOME": base / "cache", "XDG_RUNTIME_DIR": base / "runtime"}
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True)
    dirs["XDG_RUNTIME_DIR"].chmod(0o700)
    env = {k: str(v) for k, v in dirs.items()}
    env.update({
        "GSETTINGS_BACKEND": "keyfile",  # settings live in XDG_CONFIG_HOME/glib-2.0/settings
        "NO_AT_BRIDGE": "1",  # no accessibility bus (there is no session bus)
        "GTK_OVERLAY_SCROLLING": "0",
        "PS1": "$ ",
        "HISTFILE": "/dev/null",
        "TERM": "xterm",
        "LC_ALL": "C.UTF-8",
    })
    return env


# --------------------------------------------------------------------------- module helpers
def _child_env(display: str, xauthority: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"DISPLAY", "XAUTHORITY", "WAYLAND_DISPLAY"}}
    env["DISPLAY"] = display
    if xauthority:
        env["XAUTHORITY"] = xauthority
    return env


def _read_display_number(fd: int, proc: subprocess.Popen, timeout: float) -> int:
    """Xvfb writes the display number it picked to ``-displayfd`` once it accepts clients."""
    import select  # noqa: PLC0415

    buf = b""
    deadline = time.monotonic() + timeout
    while not buf.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise DesktopError(f"Xvfb did not start within {timeout:.0f}s")
        ready, _, _ = select.select([fd], [], [], min(remaining, 0.2))
        if ready:
            chunk = os.read(fd, 64)
            if not chunk:
                break
            buf += chunk
        elif proc.poll() is not None:
            raise DesktopError(f"Xvfb exited at start with code {proc.returncode}")
    match = re.match(rb"\s*(\d+)", buf)
    if not match:
        raise DesktopError(f"Xvfb did not report a display number (got {buf!r})")
    return int(match.group(1))


def _release(server_procs: list[subprocess.Popen], apps: list[subprocess.Popen], tmpdir: str | None,
             key: str) -> None:
    """Undo what an :class:`XDesktop` started: its apps, then openbox and Xvfb (given only
    for a display we started), then its temporary folder. Its finalizer: never touches the
    object itself, so it also runs at garbage collection and at interpreter exit."""
    with contextlib.suppress(Exception):
        _stop_apps(apps)
    _unbind(key)
    _close_xlib(key)
    for proc in reversed(server_procs):
        with contextlib.suppress(Exception):
            _stop(proc)
    if server_procs:
        _drop_sigterm()
    if tmpdir:
        shutil.rmtree(tmpdir, ignore_errors=True)


def _stop_apps(apps: list[subprocess.Popen]) -> None:
    """Stop launched apps and whatever they started; empties ``apps``.

    SIGKILL, all at once: nothing of a finished task needs saving (its work directory and
    settings store are wiped next), and a GTK app's orderly exit on SIGTERM costs about a
    tenth of a second per app, at every reset. Strays (the shell under a terminal, a program
    an agent started from it) are killed too.
    """
    strays = _descendants({p.pid for p in apps if p.poll() is None})
    for proc in apps:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    for proc in apps:
        _stop(proc)  # reaps it (and escalates, should a group have survived)
    apps.clear()
    _kill_pids(strays, sig=signal.SIGKILL)


def _descendants(roots: set[int]) -> list[int]:
    """Pids of every live descendant of ``roots`` (from /proc; empty where there is none)."""
    parent: dict[int, int] = {}
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = entry.read_text()
            # "pid (comm) state ppid ...": comm may contain spaces and parentheses.
            parent[int(entry.parent.name)] = int(text[text.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    found: list[int] = []
    frontier = set(roots)
    while frontier:
        children = {pid for pid, ppid in parent.items() if ppid in frontier and pid not in found}
        found.extend(sorted(children))
        frontier = children
    return found


def _kill_pids(pids: Sequence[int], timeout: float = 2.0, sig: int = signal.SIGTERM) -> None:
    """Send ``sig`` to these processes, then SIGKILL any still alive after ``timeout``."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
    for pid in _wait_gone(pids, timeout):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _wait_gone(pids: Sequence[int], timeout: float) -> list[int]:
    """Wait up to ``timeout`` seconds for these processes to end; the pids still alive."""
    deadline = time.monotonic() + timeout
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in alive if _alive(pid)]
        if alive:
            time.sleep(0.05)
    return alive


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rindex(")") + 2:].split()[0] != "Z"


#: The watchdog of a display this process started: when this process dies without closing it
#: (kill -9), the watchdog is re-parented, stops Xvfb's and openbox's sessions (TERM, then
#: KILL) and removes the display's temp folder. A parent-death signal would not do: it fires
#: when the *thread* that started the display ends, and desktops start in worker threads.
_WATCHDOG = """
import ctypes, os, shutil, signal, sys, time
try:
    ctypes.CDLL(None).prctl(15, b"crab-watchdog", 0, 0, 0)  # PR_SET_NAME: what ps shows
except (OSError, AttributeError):
    pass
parent, folder, groups = int(sys.argv[1]), sys.argv[2], [int(g) for g in sys.argv[3:]]
def alive(pid):  # a zombie (stopped, not yet reaped by the parent) counts as gone
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
while os.getppid() == parent:
    if not alive(groups[0]):  # closed the normal way: Xvfb is gone, nothing to watch
        sys.exit(0)
    time.sleep(0.5)
for sig in (signal.SIGTERM, signal.SIGKILL):
    for group in groups:
        try:
            os.killpg(group, sig)
        except OSError:
            pass
    time.sleep(1.0)
shutil.rmtree(folder, ignore_errors=True)
"""


def _watchdog(groups: list[int], tmpdir: str) -> subprocess.Popen:
    """Start the :data:`_WATCHDOG` of the sessions ``groups`` (Xvfb's first): it ends by itself
    within half a second of ``close`` stopping Xvfb."""
    return subprocess.Popen([sys.executable, "-c", _WATCHDOG, str(os.getpid()), tmpdir, *map(str, groups)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def _stop(proc: subprocess.Popen, timeout: float = 3.0) -> None:
    """Terminate a process and its session group; kill it if it lingers; always reap it."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=timeout)
    else:
        # The leader is gone; children in its session (e.g. bash under xterm) may not be.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
