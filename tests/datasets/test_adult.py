"""load_adult: the real files when present, and a tiny synthetic copy of the format always."""

from pathlib import Path

import numpy as np
import pytest

from sklearn_labeldp.datasets import load_adult

ADULT_DIR = Path(__file__).parents[2].parent / "shared" / "data" / "adult"
HAVE_ADULT = (ADULT_DIR / "adult.data.csv").is_file() and (ADULT_DIR / "adult.test.csv").is_file()
needs_adult = pytest.mark.skipif(
    not HAVE_ADULT, reason=f"UCI Adult not found at {ADULT_DIR} (adult.data.csv, adult.test.csv)"
)

HEADER = (
    "age,workclass,fnlwgt,education,education-num,marital-status,occupation,relationship,"
    "race,sex,capital-gain,capital-loss,hours-per-week,native-country,class"
)
TRAIN_ROWS = [
    "39,State-gov,77516,Bachelors,13,Never-married,Adm-clerical,Not-in-family,White,Male,"
    "2174,0,40,United-States,<=50K",
    "50, Self-emp-not-inc ,83311,Bachelors,13,Married-civ-spouse,Exec-managerial,Husband,"
    "White,Male,0,0,13,United-States,<=50K",
    "52,Self-emp-inc,287927,HS-grad,9,Married-civ-spouse,Exec-managerial,Wife,White,Female,"
    "15024,0,40,?,>50K",
    "31,Private,45781,Masters,14,Never-married,Prof-specialty,Not-in-family,White,Female,"
    "14084,0,50,United-States,>50K",
]
TEST_ROWS = [
    "25,Private,226802,11th,7,Never-married,Machine-op-inspct,Own-child,Black,Male,0,0,40,"
    "United-States,<=50K.",
    "44,Private,160323,Some-college,10,Married-civ-spouse,Machine-op-inspct,Husband,Black,"
    "Male,7688,0,40,United-States,>50K.",
]


def _write(folder, train=TRAIN_ROWS, test=TEST_ROWS, header=HEADER):
    (folder / "adult.data.csv").write_text("\n".join([header, *train]) + "\n\n")
    (folder / "adult.test.csv").write_text("\n".join([header, *test]) + "\n")
    return folder


def _flip_labels(rows):
    swap = {"<=50K": ">50K", ">50K": "<=50K", "<=50K.": ">50K.", ">50K.": "<=50K."}
    return [",".join(r.split(",")[:-1] + [swap[r.split(",")[-1]]]) for r in rows]


# --------------------------------------------------------------------------- synthetic


def test_synthetic_preprocessing_by_hand(tmp_path):
    data = load_adult(_write(tmp_path))
    # 6 numeric + one-hot categories seen in training: workclass 4 (whitespace stripped),
    # education 3, marital 2, occupation 3, relationship 3, race 1, sex 2, country 2 ("?").
    assert data.X_train.shape == (4, 6 + 4 + 3 + 2 + 3 + 3 + 1 + 2 + 2)
    assert data.X_test.shape == (2, data.X_train.shape[1])
    assert data.y_train.tolist() == [0, 0, 1, 1] and data.y_train.dtype == np.int64
    assert data.y_test.tolist() == [0, 1]  # the trailing "." is ignored
    assert list(data.target_names) == ["<=50K", ">50K"]
    names = list(data.feature_names)
    assert names[:6] == ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss",
                         "hours-per-week"]
    assert "workclass_Self-emp-not-inc" in names and "native-country_?" in names
    # Row 0 by hand: standardised numeric (training mean/std), one-hot, divided by its norm.
    raw = np.array([[39, 77516, 13, 2174, 0, 40], [50, 83311, 13, 0, 0, 13],
                    [52, 287927, 9, 15024, 0, 40], [31, 45781, 14, 14084, 0, 50]], float)
    std = raw.std(axis=0)
    std[std == 0] = 1.0  # StandardScaler leaves constant columns unscaled
    num0 = (raw[0] - raw.mean(axis=0)) / std
    onehot0 = np.zeros(len(names) - 6)
    for name in ("workclass_State-gov", "education_Bachelors", "marital-status_Never-married",
                 "occupation_Adm-clerical", "relationship_Not-in-family", "race_White",
                 "sex_Male", "native-country_United-States"):
        onehot0[names.index(name) - 6] = 1.0
    row0 = np.concatenate([num0, onehot0])
    np.testing.assert_allclose(data.X_train[0], row0 / np.linalg.norm(row0))
    # Unknown test categories ("11th", "Black", ...) are all-zero blocks; numeric columns use
    # the training scaler.
    assert data.X_test[0][names.index("race_White")] == 0
    assert data.clipped_fraction_train == 1.0


def test_synthetic_rows_inside_the_bound_are_unchanged(tmp_path):
    loose = load_adult(_write(tmp_path), norm_bound=100.0)
    tight = load_adult(tmp_path, norm_bound=0.5)
    assert loose.clipped_fraction_train == 0.0
    norms = np.linalg.norm(loose.X_train, axis=1)
    np.testing.assert_allclose(tight.X_train, 0.5 * loose.X_train / norms[:, None])
    np.testing.assert_allclose(np.linalg.norm(tight.X_test, axis=1), 0.5)


def test_synthetic_labels_do_not_enter_the_features(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = load_adult(_write(tmp_path / "a"))
    b = load_adult(_write(tmp_path / "b", _flip_labels(TRAIN_ROWS), _flip_labels(TEST_ROWS)))
    np.testing.assert_array_equal(a.X_train, b.X_train)
    np.testing.assert_array_equal(a.X_test, b.X_test)
    np.testing.assert_array_equal(a.y_train, 1 - b.y_train)


@pytest.mark.parametrize(
    "mutate, match",
    [
        (dict(test=[TEST_ROWS[0].replace("<=50K.", "maybe")]), "unexpected income labels"),
        (dict(header=HEADER.replace("class", "income")), "missing"),
        (dict(train=[TRAIN_ROWS[0].replace("39,", "old,", 1)]), "non-number"),
        (dict(train=[TRAIN_ROWS[0] + ",extra"]), "fields"),
    ],
)
def test_synthetic_bad_files(tmp_path, mutate, match):
    with pytest.raises(ValueError, match=match):
        load_adult(_write(tmp_path, **mutate))


def test_different_headers_and_missing_files(tmp_path):
    _write(tmp_path)
    (tmp_path / "adult.test.csv").write_text(HEADER.replace("age", "Age") + "\n" + TEST_ROWS[0])
    with pytest.raises(ValueError, match="different header"):
        load_adult(tmp_path)
    with pytest.raises(FileNotFoundError):
        load_adult(tmp_path / "nowhere")


@pytest.mark.parametrize("bound", [0.0, -1.0, np.inf, np.nan, True, "1"])
def test_bad_norm_bound(tmp_path, bound):
    with pytest.raises(ValueError, match="norm_bound"):
        load_adult(_write(tmp_path), norm_bound=bound)


# --------------------------------------------------------------------------- real data


@needs_adult
def test_real_adult_shapes_norms_and_labels():
    data = load_adult(ADULT_DIR)
    assert data.X_train.shape == (32561, 108) and data.X_test.shape == (16281, 108)
    assert data.X_train.dtype == np.float64 and len(data.feature_names) == 108
    assert np.all(np.linalg.norm(data.X_train, axis=1) <= 1 + 1e-12)
    assert np.all(np.linalg.norm(data.X_test, axis=1) <= 1 + 1e-12)
    # The one-hot part alone has norm sqrt(8) > 1: every row is clipped to norm exactly 1.
    assert data.clipped_fraction_train == data.clipped_fraction_test == 1.0
    np.testing.assert_allclose(np.linalg.norm(data.X_train, axis=1), 1.0)
    assert set(np.unique(data.y_train)) == set(np.unique(data.y_test)) == {0, 1}
    assert 0.23 < data.y_train.mean() < 0.25 and 0.23 < data.y_test.mean() < 0.25


@needs_adult
def test_real_adult_features_do_not_depend_on_labels(tmp_path):
    """Permuting the labels of a copy in tmp_path leaves X unchanged."""
    ref = load_adult(ADULT_DIR)
    rng = np.random.default_rng(0)
    for name in ("adult.data.csv", "adult.test.csv"):
        lines = (ADULT_DIR / name).read_text().splitlines()
        body = [line for line in lines[1:] if line.strip()]
        labels = [line.rsplit(",", 1)[1] for line in body]
        permuted = [labels[i] for i in rng.permutation(len(labels))]
        rows = [f"{line.rsplit(',', 1)[0]},{lab}" for line, lab in zip(body, permuted, strict=True)]
        (tmp_path / name).write_text("\n".join([lines[0], *rows]) + "\n")
    other = load_adult(tmp_path)
    np.testing.assert_array_equal(ref.X_train, other.X_train)
    np.testing.assert_array_equal(ref.X_test, other.X_test)
    assert not np.array_equal(ref.y_train, other.y_train)


# --------------------------------------------------------------------------- fetch_adult


def _frames_equal(a, b):
    import pandas as pd

    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True))


def test_fetch_adult_local_copy(tmp_path):
    pd = pytest.importorskip("pandas")
    from sklearn_labeldp.datasets import fetch_adult

    data = fetch_adult(_write(tmp_path))
    X, y = data.data, data.target
    assert X.shape == (6, 14) and "class" not in X.columns
    assert y.tolist() == ["<=50K", "<=50K", ">50K", ">50K", "<=50K", ">50K"]  # "." stripped
    assert list(data.target_names) == ["<=50K", ">50K"]
    assert data.source == str(tmp_path.resolve())
    assert isinstance(X["workclass"].dtype, pd.CategoricalDtype)
    assert X["workclass"].tolist()[1] == "Self-emp-not-inc"  # whitespace stripped
    assert pd.isna(X["native-country"].iloc[2])  # UCI's "?" is a missing value
    assert X["age"].dtype.kind == "i" and X["age"].tolist()[:2] == [39, 50]
    X2, y2 = fetch_adult(tmp_path, return_X_y=True)
    _frames_equal(X, X2)
    assert y2.tolist() == y.tolist()


def test_fetch_adult_reads_the_environment_variable(tmp_path, monkeypatch):
    pytest.importorskip("pandas")
    from sklearn_labeldp.datasets import _adult, fetch_adult

    monkeypatch.setattr(_adult, "fetch_openml", _no_download)
    monkeypatch.setenv("SKLEARN_LABELDP_ADULT", str(_write(tmp_path)))
    assert fetch_adult().data.shape == (6, 14)
    monkeypatch.setenv("SKLEARN_LABELDP_ADULT", str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match="SKLEARN_LABELDP_ADULT.*OpenML"):
        fetch_adult()


def _no_download(*args, **kwargs):
    raise AssertionError("fetch_adult must not download when a local copy is named")


def test_fetch_adult_openml_path_gives_the_same_frame(tmp_path, monkeypatch):
    """OpenML's copy (categories, NaN for missing) gives the frame a local copy gives."""
    pd = pytest.importorskip("pandas")
    from sklearn.utils import Bunch

    from sklearn_labeldp.datasets import _adult, fetch_adult

    local = fetch_adult(_write(tmp_path))
    raw = local.data.copy()
    raw["class"] = pd.Categorical(local.target)
    calls = []

    def fake_fetch_openml(**kwargs):
        calls.append(kwargs)
        return Bunch(frame=raw.copy())

    monkeypatch.delenv("SKLEARN_LABELDP_ADULT", raising=False)
    monkeypatch.setattr(_adult, "fetch_openml", fake_fetch_openml)
    data = fetch_adult(data_home=tmp_path / "cache")
    assert calls == [{"data_id": 1590, "as_frame": True, "data_home": tmp_path / "cache"}]
    assert data.source == "openml:1590"
    _frames_equal(data.data, local.data)
    assert data.target.tolist() == local.target.tolist()


def test_fetch_adult_refuses_unknown_labels(tmp_path):
    pytest.importorskip("pandas")
    from sklearn_labeldp.datasets import fetch_adult

    rows = [TRAIN_ROWS[0].replace("<=50K", "rich")]
    with pytest.raises(ValueError, match="unexpected income labels"):
        fetch_adult(_write(tmp_path, train=rows))


@needs_adult
def test_fetch_adult_real_files():
    pytest.importorskip("pandas")
    from sklearn_labeldp.datasets import fetch_adult

    X, y = fetch_adult(ADULT_DIR, return_X_y=True)
    assert X.shape == (48842, 14)
    assert set(y) == {"<=50K", ">50K"}
    # the training file's rows first, in the order load_adult reads them
    assert (y[:32561] == np.array(load_adult(ADULT_DIR).target_names)[
        load_adult(ADULT_DIR).y_train]).all()
