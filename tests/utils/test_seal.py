"""The seal around computations on true labels: nothing but the return value gets out."""

import ctypes
import ctypes.util
import logging
import os
import sys
import threading
import warnings

import numpy as np
import pytest
from joblib import Parallel, delayed

from sklearn_labeldp._private_labels import PrivateLabels
from sklearn_labeldp.exceptions import ReleaseError
from sklearn_labeldp.utils import SealedCall, progress, public_stderr, sealed

SECRET = "label-dependent 0.4242"


def _emit_everything():
    """Every channel a computation on labels could use, C-level printf included."""
    print(SECRET)
    print(SECRET, file=sys.stderr)
    os.write(1, f"{SECRET} fd1\n".encode())
    os.write(2, f"{SECRET} fd2\n".encode())
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.printf(b"label-dependent printf")  # no newline: sits in the C buffer until flushed
    warnings.warn(SECRET, UserWarning, stacklevel=1)
    warnings.warn(SECRET, RuntimeWarning, stacklevel=1)
    logging.getLogger("sklearn_labeldp.test").error(SECRET)
    logging.getLogger().warning(SECRET)
    return 42


def test_nothing_but_the_return_value_leaves_the_seal(capfd, caplog):
    caplog.set_level(logging.DEBUG)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert sealed(_emit_everything) == 42
    out, err = capfd.readouterr()
    assert "label-dependent" not in out + err
    assert caught == []
    assert SECRET not in caplog.text
    # Every channel works again afterwards.
    print("after")
    os.write(2, b"after fd2\n")
    logging.getLogger("sklearn_labeldp.test").error("after log")
    out, err = capfd.readouterr()
    assert "after" in out and "after fd2" in err
    assert "after log" in caplog.text


def test_the_control_shows_every_channel_without_the_seal(capfd, caplog):
    caplog.set_level(logging.DEBUG)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _emit_everything()
    ctypes.CDLL(ctypes.util.find_library("c")).fflush(None)
    out, err = capfd.readouterr()
    assert out.count(SECRET) == 2 and "label-dependent printf" in out
    assert err.count(SECRET) == 2
    assert len(caught) == 2 and SECRET in caplog.text


def _fail_with_a_number(value):
    raise ValueError(f"gradient norm {value:.6f} above tolerance")


@pytest.mark.parametrize("failure", [None, "the solver failed; details withheld."])
def test_an_exception_becomes_one_fixed_error_that_chains_nothing(failure):
    messages = set()
    for value in (0.1, 0.2):
        with pytest.raises(ReleaseError) as info:
            sealed(_fail_with_a_number, value, failure=failure)
        exc = info.value
        assert exc.__context__ is None and exc.__cause__ is None
        assert "gradient norm" not in str(exc)
        messages.add(str(exc))
    assert len(messages) == 1
    if failure is not None:
        assert messages == {failure}


def test_keyboard_interrupt_is_not_swallowed():
    def interrupt():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sealed(interrupt)


def test_state_is_restored_after_a_failure(capfd):
    filters = list(warnings.filters)
    stdout, stderr = sys.stdout, sys.stderr
    level = logging.root.manager.disable
    with pytest.raises(ReleaseError):
        sealed(_fail_with_a_number, 1.0)
    assert warnings.filters == filters
    assert (sys.stdout, sys.stderr) == (stdout, stderr)
    assert logging.root.manager.disable == level
    os.write(1, b"restored\n")
    assert "restored" in capfd.readouterr().out


def test_nested_and_concurrent_seals_restore_only_when_all_have_left(capfd):
    inside, release = threading.Event(), threading.Event()

    def long_seal():
        def body():
            inside.set()
            release.wait(10)
            os.write(1, b"label-dependent from thread\n")

        sealed(body)

    thread = threading.Thread(target=long_seal)
    thread.start()
    inside.wait(10)
    sealed(sealed, print, "label-dependent nested")  # enters and leaves while the thread is in
    os.write(1, b"label-dependent between\n")  # another thread is sealed: silenced too
    release.set()
    thread.join(10)
    os.write(1, b"open again\n")
    out, err = capfd.readouterr()
    assert "label-dependent" not in out + err
    assert "open again" in out


def _where_do_channels_go():
    return {
        "fd1": os.readlink("/proc/self/fd/1"),
        "fd2": os.readlink("/proc/self/fd/2"),
        "stdout": getattr(sys.stdout, "name", None),
        "warnings": warnings.filters[0][0],
        "logging": logging.root.manager.disable,
    }


@pytest.mark.skipif(not os.path.exists("/proc/self/fd"), reason="needs /proc")
def test_sealed_call_seals_inside_loky_workers():
    sealed_views = Parallel(n_jobs=2, backend="loky")(
        delayed(SealedCall(_where_do_channels_go))() for _ in range(2)
    )
    for view in sealed_views:
        assert view["fd1"] == view["fd2"] == os.devnull
        assert view["stdout"] == os.devnull
        assert view["warnings"] == "ignore"
        assert view["logging"] >= logging.CRITICAL
    # The control: the same task without the wrapper runs with the worker's own
    # warning filters and logging (its file descriptors are the ones it inherited,
    # /dev/null when an earlier seal in this process started the worker).
    plain = Parallel(n_jobs=2, backend="loky")(delayed(_where_do_channels_go)() for _ in range(2))
    assert all(view["warnings"] != "ignore" for view in plain)
    assert all(view["logging"] < logging.CRITICAL for view in plain)


def test_sealed_call_turns_a_worker_failure_into_the_fixed_error():
    with pytest.raises(ReleaseError, match="teacher failed"):
        Parallel(n_jobs=2, backend="loky")(
            delayed(SealedCall(_fail_with_a_number, failure="a teacher failed."))(v)
            for v in (0.1, 0.2)
        )


def test_the_progress_bar_is_the_one_open_channel(capfd):
    pytest.importorskip("tqdm")

    def count():
        assert public_stderr() is not sys.stderr
        return sum(1 for _ in progress(range(3), desc="public counts"))

    assert sealed(count) == 3
    assert "public counts" in capfd.readouterr().err
    assert public_stderr() is sys.stderr


def _noisy_mechanism(codes, *, epsilon, random_state):
    warnings.warn(f"{codes.sum()} ones", stacklevel=1)
    print(codes.sum())
    return codes + 0


def test_release_seals_its_mechanism(capfd):
    labels = PrivateLabels(np.array([0, 1, 1]), 2, 1.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = labels.release(_noisy_mechanism, [0, 1, 2], epsilon=1.0, random_state=None)
    np.testing.assert_array_equal(out, [0, 1, 1])
    assert caught == [] and capfd.readouterr() == ("", "")


def _failing_mechanism(codes):
    raise ValueError(f"{codes.sum()} ones")


def test_release_failure_carries_the_site_message_and_still_counts():
    labels = PrivateLabels(np.array([0, 1, 1]), 2, 1.0)
    with pytest.raises(ReleaseError, match="^the stage failed.$"):
        labels.release(_failing_mechanism, [0], failure="the stage failed.")
    # The failed release read the label: it is spent.
    np.testing.assert_array_equal(labels.spent, [1.0, 0.0, 0.0])


def test_a_nested_seal_closes_what_code_between_the_seals_reopened(capfd, caplog):
    caplog.set_level(logging.DEBUG)

    def inner():
        warnings.warn("label-dependent inner", UserWarning, stacklevel=1)
        print("label-dependent inner print")
        logging.getLogger("sklearn_labeldp.test").error("label-dependent inner log")

    def outer():
        # e.g. a search recording its candidates' public warnings inside its release
        with warnings.catch_warnings(record=True) as recorded:
            warnings.simplefilter("always")
            logging.disable(logging.NOTSET)
            sealed(inner)
        return recorded

    assert sealed(outer) == []
    out, err = capfd.readouterr()
    assert "label-dependent" not in out + err + caplog.text
