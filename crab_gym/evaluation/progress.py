"""One progress bar over all of a run's episodes, whatever the backend.

The driver updates it as results arrive (workers never print), so it shows the same thing
for serial, process, thread and Ray runs: episodes done, failed and resumed, and tqdm's ETA.
"""

from __future__ import annotations

from tqdm.auto import tqdm

from crab_gym.evaluation.episode import EpisodeResult


class EpisodeProgress:
    """A tqdm bar over ``total`` episodes that starts at the ``resumed`` ones."""

    def __init__(self, total: int, resumed: int = 0, *, enabled: bool = True) -> None:
        self.done = 0
        self.failed = 0
        self.resumed = resumed
        self.bar = tqdm(total=total, initial=resumed, disable=not enabled, desc="episodes", unit="ep",
                        dynamic_ncols=True)
        self._show()

    def update(self, result: EpisodeResult) -> None:
        """Count one finished episode (``failed`` when it raised)."""
        self.done += 1
        self.failed += result.error is not None
        self.bar.update(1)
        self._show()

    def _show(self) -> None:
        self.bar.set_postfix(done=self.done, failed=self.failed, resumed=self.resumed, refresh=False)

    def close(self) -> None:
        self.bar.close()
