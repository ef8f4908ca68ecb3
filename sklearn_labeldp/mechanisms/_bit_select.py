"""Locate the j-th member of many small sets at once.

RRTop-k draws a uniform label from each row's top-k set, i.e. the j-th member
(in label order) of a boolean row. A cumulative count over all K labels of
every row is the obvious way; packing each row into machine words and
locating the bit by popcounts is several times faster for the K of practice.
"""

import numpy as np

from ._buffers import WorkBuffers

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


def _popcount_into(x, out):
    """Set bits of each uint64 of ``x``, written into the int64 array ``out``."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(x, out=out)
    out[...] = _popcount64_swar(x)
    return out


def _pack_words(mask, buffers):
    """Rows of a bool ``mask`` with K <= 128 columns as 64-bit words.

    Returns an array of shape (rows, ceil(K / 64)), uint64, where label ``c``
    is bit ``c % 64`` of word ``c // 64``; for K <= 53 it is one of
    ``buffers``' arrays.
    """
    n_rows, n_classes = mask.shape
    if n_classes <= 53:
        # A product with powers of two is exact in float64: every partial sum is
        # an integer below 2**53. It beats np.packbits on short rows.
        as_float = buffers.get("pack_float", mask.shape)
        np.copyto(as_float, mask)
        packed = buffers.get("pack_sum", n_rows)
        np.matmul(as_float, _POWERS_OF_TWO[:n_classes], out=packed)
        words = buffers.get("pack_words", (n_rows, 1), np.uint64)
        np.copyto(words[:, 0], packed, casting="unsafe")
        return words
    # Here a chunk has at most CHUNK_ELEMENTS / 54 rows: these arrays are small.
    bits = np.packbits(mask, axis=1, bitorder="little")
    words = np.zeros((n_rows, (n_classes + 63) // 64), dtype="<u8")
    words.view(np.uint8)[:, : bits.shape[1]] = bits
    return words.astype(np.uint64, copy=False)


def _clear_bits(words, exclude, buffers):
    """Clear bit ``exclude[i]`` of row ``i`` of :func:`_pack_words`' output (none for -1)."""
    n_rows, n_words = words.shape
    word_of = buffers.get("clear_word", n_rows, np.int64)
    np.right_shift(exclude, 6, out=word_of)  # an arithmetic shift: -1 stays -1, no word
    bit = buffers.get("clear_bit", n_rows, np.uint64)
    np.bitwise_and(exclude, 63, out=bit.view(np.int64))
    np.left_shift(np.uint64(1), bit, out=bit)
    in_word = buffers.get("clear_in_word", n_rows, bool)
    keep_bits = buffers.get("clear_keep", n_rows, np.uint64)
    for w in range(n_words):
        np.equal(word_of, w, out=in_word)
        np.multiply(bit, in_word, out=keep_bits)
        np.invert(keep_bits, out=keep_bits)
        words[:, w] &= keep_bits


def _select_in_words(words, j, n_classes, buffers):
    """Column of the ``j``-th (from 0) set bit of each row of :func:`_pack_words`.

    A binary search of the word by halves: every step is a vector operation
    over rows, cheaper than row-wise cumulative counts on short rows. Every
    step writes into ``buffers``' arrays; ``words`` and ``j`` are not changed.
    """
    n_rows, n_words = words.shape
    word = buffers.get("select_word", n_rows, np.uint64)
    rank = buffers.get("select_rank", n_rows, np.int64)
    column = buffers.get("select_column", n_rows, np.int64)
    count = buffers.get("select_count", n_rows, np.int64)
    upper = buffers.get("select_upper", n_rows, bool)
    low = buffers.get("select_low", n_rows, np.uint64)
    np.copyto(rank, j)
    np.copyto(word, words[:, 0])
    if n_words == 1:
        column.fill(0)
    else:
        _popcount_into(words[:, 0], count)
        np.greater_equal(rank, count, out=upper)  # the bit is in the second word
        np.copyto(word, words[:, 1], where=upper)
        count *= upper
        rank -= count
        np.multiply(upper, 64, out=column)
    # The shift of each step, as uint64 for the shift and (same bits) int64 for the sum.
    shift = buffers.get("select_shift", n_rows, np.uint64)
    for half in (32, 16, 8):
        if n_words == 1 and half >= n_classes:
            continue  # the upper half holds no label
        np.bitwise_and(word, np.uint64((1 << half) - 1), out=low)
        _popcount_into(low, count)
        np.greater_equal(rank, count, out=upper)
        count *= upper
        rank -= count
        np.multiply(upper, np.uint64(half), out=shift)
        np.right_shift(word, shift, out=word)
        column += shift.view(np.int64)
    # _SELECT[byte, rank] through the flat index 8 * byte + rank.
    np.bitwise_and(word, np.uint64(0xFF), out=low)
    index = low.view(np.int64)
    index *= 8
    index += rank
    result = buffers.get("select_result", n_rows, np.int64)
    np.take(_SELECT.reshape(-1), index, out=result, mode="clip")
    result += column
    return result


def _select_in_bytes(bits, j):
    """Column of the ``j``-th (from 0) set bit of each row of ``np.packbits`` output."""
    rows = np.arange(bits.shape[0])
    counts = _POPCOUNT[bits]
    cumulative = np.cumsum(counts, axis=1, dtype=np.int64)
    byte = np.count_nonzero(cumulative <= j[:, None], axis=1)
    before = cumulative[rows, byte] - counts[rows, byte]
    return 8 * byte + _SELECT[bits[rows, byte], j - before]


def nth_member(mask, n, exclude, buffers=None):
    """Column of the ``n``-th (from 0, in column order) True of each row of ``mask``.

    Parameters
    ----------
    mask : ndarray of shape (n_rows, n_classes), bool
    n : ndarray of shape (n_rows,), int
        Must be smaller than the row's number of members (after ``exclude``).
    exclude : ndarray of shape (n_rows,), int
        A column to leave out of each row's set, or -1 for none.
    buffers : WorkBuffers, default=None
        Where the work arrays (and, up to 128 columns, the result) are kept,
        so that a caller running chunk after chunk allocates them once; by
        default, fresh ones. The result is then valid until ``buffers`` is
        used again.

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
    buffers = WorkBuffers() if buffers is None else buffers
    n_classes = mask.shape[1]
    if n_classes <= 128:
        words = _pack_words(mask, buffers)
        _clear_bits(words, np.asarray(exclude), buffers)
        return _select_in_words(words, n, n_classes, buffers)
    # Beyond 128 columns a chunk has at most CHUNK_ELEMENTS / 129 rows: small arrays.
    rows = np.flatnonzero(exclude >= 0)
    cols = exclude[rows]
    bits = np.packbits(mask, axis=1, bitorder="little")
    bits[rows, cols >> 3] &= ~(np.uint8(1) << (cols & 7).astype(np.uint8))
    return _select_in_bytes(bits, n)
