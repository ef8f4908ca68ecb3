"""Locate the j-th member of many small sets at once.

RRTop-k draws a uniform label from each row's top-k set, i.e. the j-th member
(in label order) of a boolean row. A cumulative count over all K labels of
every row is the obvious way; packing each row into machine words and
locating the bit by popcounts is several times faster for the K of practice.
"""

import numpy as np

# Drawing a uniform label from a row's top-k set means finding the j-th member
# of the set in index order. The set is packed into bits (64-bit words up to
# K = 128, bytes beyond), then located by popcounts: _POPCOUNT[b] counts the set
# bits of byte b and _SELECT[b, r] is the position of its r-th set bit (bit 0
# first). This avoids a cumulative count over all K labels of every row.
_BYTE_BITS = (np.arange(256)[:, None] >> np.arange(8)) & 1
_POPCOUNT = _BYTE_BITS.sum(axis=1).astype(np.uint8)
_SELECT = np.zeros((256, 8), dtype=np.int64)
_byte, _bit = np.nonzero(_BYTE_BITS)
_SELECT[_byte, np.cumsum(_BYTE_BITS, axis=1)[_byte, _bit] - 1] = _bit
del _byte, _bit
_POWERS_OF_TWO = 2.0 ** np.arange(53)


def _popcount64_swar(x):
    """Set bits of each uint64 (numpy < 2.0 has no ``np.bitwise_count``)."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return ((x * np.uint64(0x0101010101010101)) >> np.uint64(56)).astype(np.int64)


_popcount64 = getattr(np, "bitwise_count", _popcount64_swar)


def _pack_words(mask):
    """Rows of a bool ``mask`` with K <= 128 columns as 64-bit words.

    Returns an array of shape (rows, ceil(K / 64)), uint64, where label ``c``
    is bit ``c % 64`` of word ``c // 64``.
    """
    n_rows, n_classes = mask.shape
    if n_classes <= 53:
        # A product with powers of two is exact in float64: every partial sum is
        # an integer below 2**53. It beats np.packbits on short rows.
        return (mask @ _POWERS_OF_TWO[:n_classes]).astype(np.uint64)[:, None]
    bits = np.packbits(mask, axis=1, bitorder="little")
    words = np.zeros((n_rows, (n_classes + 63) // 64), dtype="<u8")
    words.view(np.uint8)[:, : bits.shape[1]] = bits
    return words.astype(np.uint64, copy=False)


def _select_in_words(words, j, n_classes):
    """Column of the ``j``-th (from 0) set bit of each row of :func:`_pack_words`.

    A binary search of the word by halves: every step is a vector operation
    over rows, cheaper than row-wise cumulative counts on short rows.
    """
    n_rows, n_words = words.shape
    if n_words == 1:
        word = words[:, 0]
        column = np.zeros(n_rows, dtype=np.int64)
    else:
        first_count = _popcount64(words[:, 0])
        second = j >= first_count
        word = np.where(second, words[:, 1], words[:, 0])
        j = j - first_count * second
        column = 64 * second
    for half in (32, 16, 8):
        if n_words == 1 and half >= n_classes:
            continue  # the upper half holds no label
        low_count = _popcount64(word & np.uint64((1 << half) - 1))
        upper = j >= low_count
        j = j - low_count * upper
        shift = half * upper
        word = word >> shift.astype(np.uint64)
        column = column + shift
    return column + _SELECT[(word & np.uint64(0xFF)).astype(np.intp), j]


def _select_in_bytes(bits, j):
    """Column of the ``j``-th (from 0) set bit of each row of ``np.packbits`` output."""
    rows = np.arange(bits.shape[0])
    counts = _POPCOUNT[bits]
    cumulative = np.cumsum(counts, axis=1, dtype=np.int64)
    byte = np.count_nonzero(cumulative <= j[:, None], axis=1)
    before = cumulative[rows, byte] - counts[rows, byte]
    return 8 * byte + _SELECT[bits[rows, byte], j - before]


def nth_member(mask, n, exclude):
    """Column of the ``n``-th (from 0, in column order) True of each row of ``mask``.

    Parameters
    ----------
    mask : ndarray of shape (n_rows, n_classes), bool
    n : ndarray of shape (n_rows,), int
        Must be smaller than the row's number of members (after ``exclude``).
    exclude : ndarray of shape (n_rows,), int
        A column to leave out of each row's set, or -1 for none.

    Returns
    -------
    ndarray of shape (n_rows,), int64

    Examples
    --------
    >>> import numpy as np
    >>> mask = np.array([[True, False, True, True], [True, True, False, False]])
    >>> nth_member(mask, np.array([1, 0]), exclude=np.array([-1, 0]))
    array([2, 1])
    """
    n_classes = mask.shape[1]
    rows = np.flatnonzero(exclude >= 0)
    cols = exclude[rows]
    if n_classes <= 128:
        words = _pack_words(mask)
        words[rows, cols >> 6] &= ~(np.uint64(1) << (cols & 63).astype(np.uint64))
        return _select_in_words(words, n, n_classes)
    bits = np.packbits(mask, axis=1, bitorder="little")
    bits[rows, cols >> 3] &= ~(np.uint8(1) << (cols & 7).astype(np.uint8))
    return _select_in_bytes(bits, n)
