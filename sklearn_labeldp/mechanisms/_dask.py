"""Label mechanisms over dask arrays: one lazy task per block, one stream per task.

The public mechanisms hand a dask input to :func:`map_mechanism`, which maps
the numpy mechanism itself over the blocks of ``y`` (and of row-aligned
arguments such as a prior) with :func:`dask.array.blockwise`:

- checks that do not read the labels (epsilon, n_classes, ``y``'s dimension
  and dtype, the prior's columns, row alignment, the kind of output) run
  eagerly, by calling the numpy mechanism on an empty block before anything
  is drawn or built; checks of values (label codes in range, prior entries)
  run in each block's task, when the array is computed;
- block ``i`` draws from its own :class:`numpy.random.Generator` on the
  ``i``-th child of one root :class:`numpy.random.SeedSequence` derived from
  ``random_state`` (at least 128 bits; ``"secure"`` and a secure Generator
  keep the AES counter-mode bit generator), built inside the task and
  dropped with it. So blocks never share a stream, and an int seed gives the
  same output for the same chunking (another chunking gives other draws);
- the graph's name is random, never a hash of its arguments: dask's default
  name would be a token of the seed, from which a small int seed could be
  recovered by brute force. The graph itself carries the root seed until it
  is computed or persisted; it is as secret as ``random_state``.

dask is imported only on this path: :func:`~sklearn_labeldp.utils.is_dask`
looks for ``dask.array`` among the loaded modules, since no dask array exists
before it is imported.
"""

import uuid
from functools import partial

import numpy as np

from ..utils import check_known_rows
from ..utils._random import _root

__all__ = ["map_mechanism"]

_ROWS = "i"  # blockwise index of the label axis
_OUT_COLUMNS = "z"  # blockwise index of the output's column axis
_COLUMNS = "abcdefgh"  # blockwise indices of the aligned arguments' other axes


def _block_seed(root, index):
    """The ``index``-th child of a fresh ``root``, as ``root.spawn`` makes it.

    Children of a SeedSequence that has spawned none are
    ``SeedSequence(entropy, spawn_key=spawn_key + (index,), pool_size)``;
    building one here keeps a single small root in the graph instead of one
    seed per block.
    """
    return np.random.SeedSequence(
        root.entropy, spawn_key=(*root.spawn_key, index), pool_size=root.pool_size
    )


def _run_block(mechanism, bit_generator, root, stack, params, y, block_index, *aligned):
    """One block: the numpy mechanism on its own child stream."""
    rng = np.random.Generator(bit_generator(_block_seed(root, int(block_index[0]))))
    out = mechanism(y, *aligned, random_state=rng, **params)
    return np.stack(out, axis=1) if stack else out


def _empty(array):
    return None if array is None else np.empty((0, *array.shape[1:]), dtype=array.dtype)


def _align(array, y, what):
    """A row-aligned argument as a dask array chunked like ``y`` along rows."""
    import dask.array as da

    if array is None:
        return None
    check_known_rows(y, "y")
    if array.ndim == 0 or array.shape[0] != y.shape[0]:
        raise ValueError(
            f"{what} has shape {array.shape} but y has {y.shape[0]} labels; give one row per label."
        )
    if not isinstance(array, da.Array):
        return da.from_array(
            array, chunks=(y.chunks[0], *array.shape[1:]), name=f"aligned-{uuid.uuid4().hex}"
        )
    check_known_rows(array, what)
    if array.chunks[0] != y.chunks[0]:
        raise ValueError(
            f"{what} is chunked {array.chunks[0]} along rows but y is chunked {y.chunks[0]}; "
            "rechunk it like y, e.g. prior.rechunk({0: y.chunks[0]})."
        )
    return array


def _dense_probe(mechanism, probe):
    """The probe's output as one array; whether it was a tuple of 1-d arrays."""
    if isinstance(probe, tuple) and all(isinstance(p, np.ndarray) and p.ndim == 1 for p in probe):
        return np.stack(probe, axis=1), True
    if not isinstance(probe, np.ndarray) or probe.ndim not in (1, 2):
        raise ValueError(
            f"{mechanism.__name__} cannot return {type(probe).__name__} blocks for a dask "
            "array: its dask output is a dense array. Pass sparse_output=False (a sparse "
            "output is for numpy input only)."
        )
    return probe, False


def map_mechanism(mechanism, y, *aligned, random_state, **params):
    """``mechanism`` over the blocks of a dask ``y``, lazily, one stream per block.

    Parameters
    ----------
    mechanism : callable
        A numpy mechanism ``mechanism(y, *aligned, random_state=rng, **params)``
        returning an ndarray with a row per label (1-d or 2-d), or a tuple of
        1-d ones.
    y : dask.array.Array or array-like of shape (n_samples,)
        A numpy ``y`` is split like the first dask argument in ``aligned``.
    *aligned : dask.array.Array, array-like of shape (n_samples, ...) or None
        Arguments with one row per label (a prior); ``None`` is passed as is.
        A numpy one is split like ``y``; a dask one must be chunked like
        ``y`` along rows (its other axes may be in several chunks).
    random_state : None, "secure", int, numpy.random.Generator or numpy.random.RandomState
        Seeds the root SeedSequence; a Generator or RandomState advances by
        256 bits.
    **params
        Passed to ``mechanism`` unchanged.

    Returns
    -------
    dask.array.Array, or a tuple of them for a tuple-valued mechanism
        Chunked like ``y`` along rows, with the other axis in one chunk.
    """
    import dask.array as da

    aligned = [a if a is None or isinstance(a, da.Array) else np.asarray(a) for a in aligned]
    if not isinstance(y, da.Array):
        rows = next(a for a in aligned if isinstance(a, da.Array))
        check_known_rows(rows, "the dask argument")
        y = da.from_array(
            np.asarray(y),
            chunks=(rows.chunks[0], *np.shape(y)[1:]),
            name=f"labels-{uuid.uuid4().hex}",
        )
    # The numpy mechanism on an empty block checks every argument that is not
    # a label value and gives the output's dtype and width; its generator has
    # fresh entropy and draws nothing. It runs before random_state is used, so
    # a bad call does not advance the caller's generator.
    probe = mechanism(
        _empty(y), *map(_empty, aligned), random_state=np.random.default_rng(), **params
    )
    probe, stacked = _dense_probe(mechanism, probe)
    aligned = [_align(a, y, f"argument {i + 2}") for i, a in enumerate(aligned)]
    root, bit_generator = _root(random_state)
    # Block i of y meets block i of this index array: blockwise pairs blocks by
    # position (align_arrays=False), whatever their sizes, and takes the
    # output's chunks from the first argument, y.
    block_index = da.arange(y.numblocks[0], chunks=1, dtype=np.int64)
    args, letters = [y, _ROWS, block_index, _ROWS], iter(_COLUMNS)
    for array in aligned:
        columns = "" if array is None else "".join(next(letters) for _ in range(array.ndim - 1))
        args += [array, None if array is None else _ROWS + columns]
    out = da.blockwise(
        partial(_run_block, mechanism, bit_generator, root, stacked, params),
        _ROWS + _OUT_COLUMNS[: probe.ndim - 1],
        *args,
        new_axes={_OUT_COLUMNS: probe.shape[1]} if probe.ndim == 2 else None,
        concatenate=True,  # an aligned argument's column chunks, joined per block
        align_arrays=False,
        meta=probe,
        # A random name: dask's default is a hash of the arguments, the seed included.
        name=f"{mechanism.__name__}-{uuid.uuid4().hex}",
    )
    return tuple(out[:, j] for j in range(probe.shape[1])) if stacked else out
