"""Progress bars for long fits, through tqdm when it is installed (the ``dask`` extra)."""

from ._seal import public_stderr

__all__ = ["progress"]


def progress(iterable, *, total=None, desc=None, enabled=True):
    """``iterable`` with a tqdm progress bar when ``enabled`` and tqdm is installed.

    The bar reports counts and timing only, never anything computed from the
    labels: it is the one channel that stays open inside a sealed release
    (it writes to the real stderr there). Without tqdm the iterable is
    returned unchanged.

    Parameters
    ----------
    iterable : iterable
    total : int, default=None
        Number of items, when ``iterable`` has no length.
    desc : str, default=None
        Label shown before the bar.
    enabled : bool, default=True

    Returns
    -------
    iterable

    Examples
    --------
    >>> from sklearn_labeldp.utils import progress
    >>> list(progress(range(3), enabled=False))
    [0, 1, 2]
    """
    if not enabled:
        return iterable
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return iterable
    return tqdm(iterable, total=total, desc=desc, file=public_stderr())
