"""The key names pyautogui accepts (its ``KEYBOARD_KEYS``), without importing pyautogui.

pyautogui connects to ``$DISPLAY`` when imported, but the action schemas (an enum of key
names) must exist before any display does. ``tests/desktop`` checks this list against
``pyautogui.KEYBOARD_KEYS``.

An unknown name is answered with the nearest names (:func:`unknown_key_message`), not the
whole list: ~190 names in an error bury the one the agent meant.
"""

from __future__ import annotations

import difflib

KEYBOARD_KEYS: tuple[str, ...] = (
    '\t', '\n', '\r', ' ', '!', '"', '#', '$', '%', '&', "'", '(', ')', '*', '+', ',', '-',
    '.', '/', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', ':', ';', '<', '=', '>', '?',
    '@', '[', '\\', ']', '^', '_', '`', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k',
    'l', 'm', 'n', 'o', 'p', 'q', 'r', 's', 't', 'u', 'v', 'w', 'x', 'y', 'z', '{', '|', '}',
    '~', 'accept', 'add', 'alt', 'altleft', 'altright', 'apps', 'backspace', 'browserback',
    'browserfavorites', 'browserforward', 'browserhome', 'browserrefresh', 'browsersearch',
    'browserstop', 'capslock', 'clear', 'convert', 'ctrl', 'ctrlleft', 'ctrlright', 'decimal',
    'del', 'delete', 'divide', 'down', 'end', 'enter', 'esc', 'escape', 'execute', 'f1', 'f10',
    'f11', 'f12', 'f13', 'f14', 'f15', 'f16', 'f17', 'f18', 'f19', 'f2', 'f20', 'f21', 'f22',
    'f23', 'f24', 'f3', 'f4', 'f5', 'f6', 'f7', 'f8', 'f9', 'final', 'fn', 'hanguel', 'hangul',
    'hanja', 'help', 'home', 'insert', 'junja', 'kana', 'kanji', 'launchapp1', 'launchapp2',
    'launchmail', 'launchmediaselect', 'left', 'modechange', 'multiply', 'nexttrack',
    'nonconvert', 'num0', 'num1', 'num2', 'num3', 'num4', 'num5', 'num6', 'num7', 'num8',
    'num9', 'numlock', 'pagedown', 'pageup', 'pause', 'pgdn', 'pgup', 'playpause', 'prevtrack',
    'print', 'printscreen', 'prntscrn', 'prtsc', 'prtscr', 'return', 'right', 'scrolllock',
    'select', 'separator', 'shift', 'shiftleft', 'shiftright', 'sleep', 'space', 'stop',
    'subtract', 'tab', 'up', 'volumedown', 'volumemute', 'volumeup', 'win', 'winleft',
    'winright', 'yen', 'command', 'option', 'optionleft', 'optionright',
)

#: Where the full list is, for error messages.
WHERE_KEYS_ARE_LISTED = (
    "full list: the key enum in the JSON schema of key_press/hotkey (env.tools()) "
    "or crab_gym.envs.desktop.keys.KEYBOARD_KEYS"
)


def suggest_keys(name: str, n: int = 3) -> list[str]:
    """Up to ``n`` key names nearest to ``name`` (a different case counts as nearest)."""
    lowered = name.strip().lower()
    if lowered in KEYBOARD_KEYS:
        return [lowered]
    words = [k for k in KEYBOARD_KEYS if len(k) > 1] if len(lowered) > 1 else list(KEYBOARD_KEYS)
    return difflib.get_close_matches(lowered, words, n=n, cutoff=0.6)


def unknown_key_message(name: object) -> str:
    """Why ``name`` is not a key: the nearest names and where the full list is."""
    if not isinstance(name, str):
        return f"must be a key name (a string such as 'enter'); {WHERE_KEYS_ARE_LISTED}"
    parts = [p.strip().lower() for p in name.split("+")]
    if len(parts) > 1 and all(p in KEYBOARD_KEYS for p in parts):
        combo = ", ".join(repr(p) for p in parts)
        return f"is not a key name; press a combination with hotkey(keys=[{combo}])"
    near = suggest_keys(name)
    if near:
        hint = "did you mean " + " or ".join(repr(k) for k in near) + "?"
    else:
        hint = "no key name is close to it"
    return f"is not a key name; {hint} ({WHERE_KEYS_ARE_LISTED})"
