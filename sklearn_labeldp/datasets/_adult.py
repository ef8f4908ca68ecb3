"""UCI Adult (census income): as a DataFrame, and preprocessed for the private linear models."""

import csv
import os
from pathlib import Path

import numpy as np
from sklearn.datasets import fetch_openml
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.utils import Bunch

from ..utils import check_positive

__all__ = ["fetch_adult", "load_adult"]

ADULT_NUMERIC = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss",
                 "hours-per-week")
ADULT_TARGET = "class"
ADULT_TARGET_NAMES = np.array(["<=50K", ">50K"])
ADULT_ENV = "SKLEARN_LABELDP_ADULT"
ADULT_OPENML_ID = 1590  # OpenML's "adult", version 2: UCI's 48,842 rows
ADULT_FILES = ("adult.data.csv", "adult.test.csv")


def _read_csv(path):
    """Header and body (object array of stripped strings) of a CSV file with a header row."""
    with open(path, newline="") as f:
        rows = [[v.strip() for v in row] for row in csv.reader(f) if any(v.strip() for v in row)]
    if not rows:
        raise ValueError(f"{path} is empty; expected a header row and data rows.")
    header, body = rows[0], rows[1:]
    if not body:
        raise ValueError(f"{path} has a header but no data rows.")
    if any(len(r) != len(header) for r in body):
        raise ValueError(f"{path}: every row must have {len(header)} fields like the header.")
    return header, np.array(body, dtype=object)


def _label_names(column):
    """The income labels as strings, ``"<=50K"`` or ``">50K"`` (the test file's ``.`` dropped)."""
    return np.array([str(v).strip().rstrip(".") for v in column], dtype=object)


def _labels(column):
    """1 for ``>50K``, 0 for ``<=50K`` (the test file's trailing ``.`` is ignored)."""
    values = _label_names(column)
    unknown = sorted(set(values) - set(ADULT_TARGET_NAMES))
    if unknown:
        raise ValueError(f"unexpected income labels {unknown[:5]}; expected '<=50K' or '>50K'.")
    return (values == ">50K").astype(np.int64)


def load_adult(data_dir, *, norm_bound=1.0):
    """Load UCI Adult and preprocess its features for the private linear models.

    Reads ``adult.data.csv`` (training, 32,561 rows) and ``adult.test.csv``
    (test, 16,281 rows) from ``data_dir`` in place (nothing is copied or
    downloaded). Both are CSV files with the same header row; the column
    ``class`` holds the income label (whitespace and a trailing ``.`` are
    stripped).

    Features (a function of the features alone; no label is read):

    1. the 6 numeric columns (``age``, ``fnlwgt``, ``education-num``,
       ``capital-gain``, ``capital-loss``, ``hours-per-week``) standardised
       with a :class:`~sklearn.preprocessing.StandardScaler`, followed by
    2. the one-hot encoding of the 8 other columns in the order of the header
       (:class:`~sklearn.preprocessing.OneHotEncoder`, categories sorted,
       ``"?"`` is a category of its own, categories not seen in training are
       encoded as all zeros);
    3. every row clipped to L2 norm ``norm_bound``: a row of larger norm is
       divided by ``norm / norm_bound``, a row inside the ball is unchanged.

    Scaler and encoder are fitted on the *training features only*; the test
    features are transformed with them. Clipping is a per-row map with a
    public bound, so nothing computed from other rows enters a row (in
    particular, rows are not divided by the largest norm of the data set, a
    data-dependent factor that would leak under full DP). Every Adult row has
    norm above 1 (its one-hot part alone has norm ``sqrt(8)``), so with the
    default bound this is per-row L2 normalisation.

    Parameters
    ----------
    data_dir : str or path-like
        Folder holding ``adult.data.csv`` and ``adult.test.csv``.
    norm_bound : float, default=1.0
        Public L2 bound on each feature row (> 0).

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        With keys

        - ``X_train`` : ndarray of shape (n_train, n_features), float64, row
          norms ``<= norm_bound``;
        - ``y_train`` : ndarray of shape (n_train,), int64, 1 for ``>50K``;
        - ``X_test``, ``y_test`` : the same for the test file;
        - ``feature_names`` : ndarray of str, the 6 numeric names then
          ``"<column>_<category>"`` for each one-hot column;
        - ``target_names`` : ``array(['<=50K', '>50K'])``, indexed by the
          labels;
        - ``clipped_fraction_train``, ``clipped_fraction_test`` : float, the
          share of rows whose norm exceeded ``norm_bound`` before clipping.

    Raises
    ------
    FileNotFoundError
        When a file is missing.
    ValueError
        When the headers differ, a numeric or the ``class`` column is absent,
        a label is neither ``<=50K`` nor ``>50K``, or ``norm_bound`` is not a
        finite number > 0.

    References
    ----------
    .. [1] B. Becker, R. Kohavi. Adult. UCI Machine Learning Repository, 1996.
    .. [2] K. Chaudhuri, C. Monteleoni, A. D. Sarwate. Differentially private
       empirical risk minimization. JMLR 12:1069-1109, 2011: the data set of
       its experiments.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from sklearn_labeldp.datasets import load_adult
    >>> header = ("age,workclass,fnlwgt,education,education-num,marital-status,occupation,"
    ...           "relationship,race,sex,capital-gain,capital-loss,hours-per-week,"
    ...           "native-country,class")
    >>> rows = ["39,State-gov,77516,Bachelors,13,Never-married,Adm-clerical,Not-in-family,"
    ...         "White,Male,2174,0,40,United-States,<=50K",
    ...         "52,Self-emp-inc,287927,HS-grad,9,Married-civ-spouse,Exec-managerial,Wife,"
    ...         "White,Female,15024,0,40,United-States,>50K"]
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("adult.data.csv", "adult.test.csv"):
    ...     _ = (d / name).write_text("\\n".join([header] + rows) + "\\n")
    >>> data = load_adult(d)
    >>> data.X_train.shape, data.y_train.tolist()
    ((2, 20), [0, 1])
    """
    try:
        norm_bound = check_positive(norm_bound, "norm_bound")
    except TypeError as exc:  # load_adult documents a ValueError for any bad norm_bound
        raise ValueError(str(exc)) from None
    data_dir = Path(data_dir)
    (header, train), (header_test, test) = (_read_csv(data_dir / name) for name in ADULT_FILES)
    if header != header_test:
        raise ValueError("adult.data.csv and adult.test.csv have different header rows.")
    missing = [c for c in (*ADULT_NUMERIC, ADULT_TARGET) if c not in header]
    if missing:
        raise ValueError(f"columns {missing} are missing from the header {header}.")
    target = header.index(ADULT_TARGET)
    num = [header.index(c) for c in ADULT_NUMERIC]
    cat = [i for i in range(len(header)) if i not in num and i != target]
    features = [i for i in range(len(header)) if i != target]

    X_train, X_test, encoder = _preprocess(train[:, features], test[:, features],
                                           [features.index(i) for i in num],
                                           [features.index(i) for i in cat])
    norms_train = np.linalg.norm(X_train, axis=1)
    norms_test = np.linalg.norm(X_test, axis=1)
    names = list(ADULT_NUMERIC) + list(
        encoder.get_feature_names_out([header[i] for i in cat])
    )
    return Bunch(
        X_train=X_train / np.maximum(norms_train / norm_bound, 1.0)[:, None],
        y_train=_labels(train[:, target]),
        X_test=X_test / np.maximum(norms_test / norm_bound, 1.0)[:, None],
        y_test=_labels(test[:, target]),
        feature_names=np.array(names, dtype=object),
        target_names=ADULT_TARGET_NAMES.copy(),
        clipped_fraction_train=float(np.mean(norms_train > norm_bound)),
        clipped_fraction_test=float(np.mean(norms_test > norm_bound)),
    )


def _preprocess(train, test, num, cat):
    """Standardise ``num``, one-hot ``cat``; fitted on the training features only.

    Receives the feature columns only: the labels cannot enter.
    """
    def numeric(a):
        try:
            return a[:, num].astype(np.float64)
        except ValueError as exc:
            raise ValueError(f"a numeric Adult column holds a non-number: {exc}") from None

    scaler = StandardScaler().fit(numeric(train))
    encoder = OneHotEncoder(handle_unknown="ignore", sparse_output=False).fit(train[:, cat])

    def transform(a):
        return np.hstack([scaler.transform(numeric(a)), encoder.transform(a[:, cat])])

    return transform(train), transform(test), encoder


def fetch_adult(data_dir=None, *, data_home=None, return_X_y=False):
    """UCI Adult as a pandas DataFrame of raw features and an array of income labels.

    The 48,842 rows of UCI Adult (Becker and Kohavi 1996), features as they
    come (8 string columns and 6 numeric ones), for pipelines that encode them
    themselves (a :class:`~sklearn.compose.ColumnTransformer`). The data is
    read from the first of:

    1. ``data_dir``, a folder holding UCI's ``adult.data.csv`` and
       ``adult.test.csv`` with a header row (as :func:`load_adult` reads);
    2. the folder named by the environment variable ``SKLEARN_LABELDP_ADULT``;
    3. OpenML's copy (data set 1590, "adult" version 2) through
       :func:`sklearn.datasets.fetch_openml`, downloaded once and cached in
       scikit-learn's data home (``data_home``, default
       :func:`sklearn.datasets.get_data_home`).

    Both sources give the same frame: string columns as pandas categories,
    numeric columns as numbers, UCI's ``"?"`` as a missing value, the
    training file's rows before the test file's; labels ``"<=50K"`` or
    ``">50K"`` (the test file's trailing ``.`` removed). Nothing here reads
    the labels beyond returning them; they are the private part of the data.

    Parameters
    ----------
    data_dir : str or path-like, default=None
        Folder of a local copy; ``None`` looks at ``SKLEARN_LABELDP_ADULT``,
        then OpenML.
    data_home : str or path-like, default=None
        scikit-learn's cache folder for the OpenML download.
    return_X_y : bool, default=False
        Return ``(X, y)`` instead of a :class:`~sklearn.utils.Bunch`.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (DataFrame of shape (48842, 14)), ``target`` (ndarray of
        str), ``target_names`` (``array(['<=50K', '>50K'])``) and ``source``
        (the folder read, or ``"openml:1590"``).
    (X, y) : tuple
        When ``return_X_y`` is true.

    Raises
    ------
    FileNotFoundError
        When ``data_dir`` or ``SKLEARN_LABELDP_ADULT`` names a folder without
        both files.
    ValueError
        When a label is neither ``<=50K`` nor ``>50K``.

    References
    ----------
    .. [1] B. Becker, R. Kohavi. Adult. UCI Machine Learning Repository, 1996.
    .. [2] J. Vanschoren, J. N. van Rijn, B. Bischl, L. Torgo. OpenML:
       networked science in machine learning. SIGKDD Explorations 15(2), 2013.

    Examples
    --------
    >>> from sklearn_labeldp.datasets import fetch_adult
    >>> X, y = fetch_adult(return_X_y=True)  # doctest: +SKIP
    >>> X.shape, sorted(set(y))  # doctest: +SKIP
    ((48842, 14), ['<=50K', '>50K'])
    """
    from pandas.api.types import is_numeric_dtype  # pandas: an optional dependency

    folder = data_dir if data_dir is not None else os.environ.get(ADULT_ENV)
    if folder is not None:
        frame, source = _read_local_frame(Path(folder)), str(Path(folder).resolve())
    else:
        frame = fetch_openml(data_id=ADULT_OPENML_ID, as_frame=True,
                             data_home=data_home).frame
        source = f"openml:{ADULT_OPENML_ID}"
    X = frame.drop(columns=ADULT_TARGET)
    for column in X.columns:
        if not is_numeric_dtype(X[column].dtype):
            X[column] = X[column].astype("category")
    labels = _label_names(frame[ADULT_TARGET])
    _labels(labels)  # the same check of the label set as load_adult's
    if return_X_y:
        return X, labels
    return Bunch(data=X, target=labels, target_names=ADULT_TARGET_NAMES.copy(), source=source)


def _read_local_frame(folder):
    """UCI's two CSV files read as one DataFrame, ``"?"`` as missing."""
    import pandas as pd

    paths = [folder / name for name in ADULT_FILES]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise FileNotFoundError(
            f"UCI Adult not found: {', '.join(missing)} missing. Pass data_dir= (or set "
            f"{ADULT_ENV}) to a folder holding {' and '.join(ADULT_FILES)}, or leave both "
            "unset to fetch OpenML's copy into scikit-learn's data home."
        )
    frame = pd.concat([pd.read_csv(p, skipinitialspace=True) for p in paths], ignore_index=True)
    for column in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[column].dtype):
            frame[column] = frame[column].str.strip().replace("?", np.nan)
    return frame
