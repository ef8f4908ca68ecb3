"""PATEClassifier: teachers on disjoint parts, noisy vote aggregation, a student."""

import functools
import warnings
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from scipy.sparse import issparse
from sklearn.base import clone, is_classifier
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.semi_supervised import SelfTrainingClassifier
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import HasMethods, Interval, RealNotInt, StrOptions
from sklearn.utils.validation import _num_samples

from .._base import (
    BaseLabelDPMetaClassifier,
    _rows_with_missing_values,
    quick_trial,
    quiet,
    seed_estimator,
    subset_fit_params,
    trial_codes,
    trial_fit,
)
from .._predict import CodeClassifierPredictMixin
from .._target_adapters import (
    fit_semi_supervised_targets,
    learns_semi_supervised,
)
from ..accounting import PrivacySpend
from ..utils import SealedCall, progress, spawn_generators
from ..utils._estimator_checks import SAMPLE_WEIGHT_EQUIVALENCE
from ._aggregators import AGGREGATORS, VoteSetting

__all__ = ["PATEClassifier"]

# The error raised when a teacher's worker fails outside the teacher (a teacher that
# raises abstains instead, see _teacher_votes). Fixed and free of numbers: an
# exception's type, text and traceback may hold values computed from the labels.
_TEACHER_FAILURE = (
    "PATEClassifier: the work around a teacher (sending it its part, collecting its "
    "votes) failed after the budget was charged. Its error is withheld, since it may "
    "depend on the private labels, and the budget stays spent."
)

# A teacher's vote that counts for no class: the vote of a teacher that failed.
ABSTAIN = -1


# The "auto" rule of the teacher and query counts (see _auto_teachers_and_queries).
_MARGIN = 3.5  # teachers per answer-noise std, times sqrt(1 + ln K)
_ROWS_PER_CLASS, _MIN_ROWS = 2, 5  # rows per teacher: at least max(5, 2 K)
_MAX_QUERIES = 1000  # queries: at most 1000, the upper end of Papernot et al. (2017)
_QUERIES_PER_CLASS, _MIN_QUERIES = 5, 50  # queries: at least min(n, max(50, 5 K))


def _auto_teachers_and_queries(n_samples, n_classes, noise_std, n_teachers, n_queries):
    """Resolve ``"auto"`` teacher and query counts from public quantities only.

    ``noise_std(Q)`` is the std, in votes, of the noise on each bin of the
    histogram that picks an answer when ``Q`` queries share the budget: it
    depends on epsilon, delta and the aggregator only, and grows with ``Q``.
    Two conditions make an answer useful (Papernot et al. 2017, 2018):

    - the noise is small against the plurality's margin, which grows with the
      number of teachers: ``T >= c sigma``, ``c = 3.5 sqrt(1 + ln K)`` (the
      largest of ``K - 1`` noisy wrong bins grows like ``sqrt(2 ln K)`` noise
      stds; Papernot et al. 2018 run ``T / sigma`` of about 6 on MNIST, 250
      teachers against ``sigma = 40``);
    - each teacher has enough rows to be accurate: ``n / T >= max(5, 2 K)``,
      two rows per class or more (a logistic-regression teacher on one row
      per class of the digits is right about 40% of the time, on two about
      55%, and a plurality of such teachers is no better: their errors agree).

    ``Q`` is the largest count up to ``min(n, 1000)`` for which both hold,
    and at least ``min(n, max(50, 5 K))``: a student taught fewer than a few labels
    per class cannot tell the classes apart however clean they are, and at a
    small epsilon more, noisier, answers teach it more than fewer clean ones
    (300 rows, two classes, epsilon 1: 25 to 50 queries gave 0.60 to 0.71
    where the margin rule's 5 gave the majority rate). ``T`` is the fewest
    teachers that meet the first condition, ``ceil(c sigma(Q))``, within
    ``[1, n / max(5, 2 K)]``: fewer teachers each see more rows. Holding
    ``T / sigma`` at ``c`` holds the selection noise of Confident-GNMax at
    ``sigma_ratio / c`` of the teachers, so the share of queries answered
    does not shrink as epsilon grows while ``Q`` grows. The two floors were
    set from a sweep of ``(T, Q)`` on the digits and 300-row synthetic sets
    (``benchmarks/pate.py``); the margin constant is Papernot et al.'s. A
    given count (an int, not ``"auto"``) is used
    as given and the other is resolved against it. No label is read.
    """
    margin = _MARGIN * np.sqrt(1.0 + np.log(n_classes))
    most_teachers = max(1, n_samples // max(_MIN_ROWS, _ROWS_PER_CLASS * n_classes))
    if n_teachers != "auto":
        most_teachers = n_teachers
    if n_queries == "auto":
        # noise_std grows with Q: bisect for the largest Q that the teachers cover.
        low, high = 1, min(n_samples, _MAX_QUERIES)
        while low < high:
            middle = (low + high + 1) // 2
            if margin * noise_std(middle) <= most_teachers:
                low = middle
            else:
                high = middle - 1
        # A student taught fewer than a few labels per class cannot tell the
        # classes apart however clean the labels: below that, more (noisier)
        # answers teach more than fewer clean ones.
        n_queries = max(low, min(n_samples, max(_MIN_QUERIES, _QUERIES_PER_CLASS * n_classes)))
    if n_teachers == "auto":
        n_teachers = int(min(most_teachers, max(1, np.ceil(margin * noise_std(n_queries)))))
    return n_teachers, n_queries


# The "auto" aggregator (see _auto_aggregator).
_AUTO_AGGREGATOR = "gnmax"

# The "auto" student (see _auto_student): class weights balanced when a teacher's
# part holds fewer than 10 rows per class.
_BALANCED_ROWS_PER_CLASS = 10


def _auto_aggregator():
    """The aggregator ``"auto"`` resolves to: GNMax, from no quantity at all.

    Every query is paid for whatever the aggregator answers (the guarantee is
    data-independent), so Confident-GNMax's selection buys no privacy here,
    unlike under Papernot et al.'s (2018) data-dependent analysis: it costs
    part of the budget (``sigma2`` is about 6% larger than GNMax's ``sigma`` at
    ``sigma_ratio=2``) and discards the answers it does not select. Measured
    by ``benchmarks/pate_defaults.py aggregator`` on the digits and five
    synthetic sets, at epsilon 1 to 16, with the "auto" counts and with 30
    teachers for 50 queries: GNMax ahead in 55 of 72 settings (by up to 20
    points), level in 10, behind in 7 (by at most 4 points). No label is
    read.
    """
    return _AUTO_AGGREGATOR


def _auto_student(teacher_given, n_samples, n_classes, n_teachers, n_queries,
                  sparse_X=False):
    """The student ``"auto"`` resolves to, from public quantities only.

    With a teacher of the user's (``teacher_given``), a clone of it: only
    that teacher is known to take the data as given (a DataFrame through a
    ``ColumnTransformer``, documents, images). With the default teacher, a
    logistic regression on standardised features (a sparse ``X`` is scaled
    without centring, which keeps it sparse), wrapped in a
    ``SelfTrainingClassifier`` (Yarowsky 1995) when some training rows are
    not queried (``Q < n``): the public features of those rows are
    unlabeled data, as for Papernot et al.'s (2017) semi-supervised
    students, and self-training keeps to its base where they do not help.
    Its class weights are ``"balanced"`` when a teacher's part holds fewer
    than ``10 K`` rows (``n / T < 10 K``): such teachers rarely see a
    minority class, their plurality under-answers it, and an unweighted
    student then predicts the majority class alone; with larger parts the
    plurality keeps the classes' shares, and the weights would only trade
    accuracy for balanced accuracy. Measured by
    ``benchmarks/pate_defaults.py`` (``student``, ``weights``). No label is
    read.
    """
    if teacher_given is not None:
        return teacher_given
    weights = "balanced" if n_samples < _BALANCED_ROWS_PER_CLASS * n_classes * n_teachers else None
    student = make_pipeline(StandardScaler(with_mean=not sparse_X),
                            LogisticRegression(class_weight=weights))
    return SelfTrainingClassifier(student) if n_queries < n_samples else student


def _teacher_data(teacher, X, part, codes_part, fit_params, n_samples):
    """What one teacher (or the student, whose part is the queries) trains on.

    Its part, or for a semi-supervised teacher (FixMatch: PATE-FM, Malek et
    al. 2021; scikit-learn's ``LabelSpreading``, ``LabelPropagation`` or
    ``SelfTrainingClassifier``) every training input with ``-1`` as the label
    outside its part (under label DP the features are public; only its part's
    labels are read). Only such a teacher is sent all of ``X``, and it gets no
    routed ``fit`` metadata, which is per row of its part.
    """
    if not learns_semi_supervised(teacher):
        return _safe_indexing(X, part), codes_part, subset_fit_params(fit_params, part, n_samples)
    targets = np.full(_num_samples(X), -1, dtype=np.intp)
    targets[part] = codes_part
    return X, targets, {}


def _stand_in(targets):
    """``targets`` with the labeled entries replaced by label-free stand-in codes.

    What a teacher whose part holds a single class is fitted on: the same rows,
    the same unlabeled ``-1`` entries, and in place of its labels the code 1 on
    the first labeled row and 0 on the others. A part that holds one class
    differs from every neighbouring part that does not (one label changed) in
    one row: the stand-in is such a part, so the teacher does the work it would
    do in that neighbouring world (the same number of classes, one row apart;
    which row and which classes are label-free choices, and a classifier's
    work does not depend on the classes' names). The first labeled row of a
    part is a row drawn at random: parts are drawn as a random permutation.
    """
    stand_in = np.array(targets, dtype=np.intp)
    labeled = np.flatnonzero(stand_in >= 0)
    stand_in[labeled] = 0
    stand_in[labeled[0]] = 1
    return stand_in


def _teacher_votes(teacher, X_train, targets, fit_params, X_queries, n_classes):
    """Fit one teacher on its data and return its votes on the queries.

    The work does not depend on the labels (Papernot et al. 2017's sensitivity
    argument needs only the votes to; the attacker also sees the work):

    - a teacher with fewer than two labeled rows (a public fact: its part's
      size) is not fitted;
    - any other teacher is fitted and then predicts on the queries. When its
      part's labels are all one class (which many classifiers refuse), it is
      fitted on label-free stand-in codes that are one row away from one
      class, as the part is in a neighbouring world (:func:`_stand_in`);
    - a teacher that has seen one class only (one row, or a part of one
      class) abstains whatever its fit gives: every vote is :data:`ABSTAIN`,
      which counts for no class. Its vote would be that class on every
      query, the same whatever the query, so it says nothing about which
      query belongs to which class; it only adds a vote to the class that
      fills most parts. On imbalanced data with small parts those votes are
      most of the histogram (a part of 5 rows holds no row of a 10% class
      59% of the time), and the plurality then answers the majority class on
      every query: the student learns the majority class alone;
    - a teacher whose fit or prediction raises, or whose votes are not one
      code it was trained on per query, abstains too. (A teacher that
      refuses a part holding one row of another class refuses its stand-in
      too, so a one-class part and its neighbour fail alike.)

    A label change alters one teacher's training targets, so it changes that
    teacher's votes only, whichever of these cases each world falls in: on each
    query's histogram one vote moves between two bins, or one bin gains or loses
    a vote (a teacher that abstains in one world), within the sensitivity the
    aggregator's noise covers.

    Only the votes leave the worker: the fitted teacher (a clone, so the
    unfitted template passed in is left untouched), a non-private function of
    its part's labels, is dropped here. :func:`_pate_release` runs it through
    :class:`~sklearn_labeldp.utils.SealedCall`, so whatever the fit emits
    (warnings, output on file descriptors 1 and 2, log records, its error)
    stays in the process that runs it, a loky or Dask worker included.
    """
    n_queries = _num_samples(X_queries)
    labeled = targets[targets >= 0]
    abstain = np.full(n_queries, ABSTAIN, dtype=np.intp)
    if labeled.size < 2:
        return abstain
    one_class = np.unique(labeled).size == 1
    try:
        votes = _fit_and_vote(teacher, X_train, _stand_in(targets) if one_class else targets,
                              fit_params, X_queries)
        # One vote per query, a code the teacher was trained on: anything else would
        # land in another query's histogram and break the sensitivity the noise covers.
        valid = votes.shape == (n_queries,) and bool(np.isin(votes, labeled).all())
    except Exception:  # noqa: BLE001 - a failure is a fixed output, not an abort
        valid = False
    if one_class or not valid:
        return abstain
    return votes.astype(np.intp)


def _fit_and_vote(teacher, X_train, targets, fit_params, X_queries):
    """A clone of ``teacher`` fitted on ``targets``, and its predictions on the queries."""
    fitted = fit_semi_supervised_targets(clone(teacher), X_train, targets, fit_params)
    return np.asarray(fitted.predict(X_queries))


def _pate_release(
    codes, *, X, parts, queries, teachers, fit_params, n_classes, n_jobs, verbose, aggregate
):
    """The PATE mechanism on all label codes: teachers' votes, noisily aggregated.

    Each teacher reads the codes of its part only; the vote histograms and
    the teachers stay local, and only the aggregator's output is returned.
    The caller (:meth:`PrivateLabels.release`) seals this process; each
    teacher is sealed again where it runs, since a joblib or Dask worker has
    file descriptors, warning filters and loggers of its own (a teacher's
    ``ConvergenceWarning`` in a loky worker goes to that worker's stderr,
    which is the caller's terminal).
    """
    X_queries = _safe_indexing(X, queries)
    n_samples = codes.shape[0]
    sealed_teacher = SealedCall(_teacher_votes, failure=_TEACHER_FAILURE)
    teacher_votes = Parallel(n_jobs=n_jobs, return_as="generator")(
        delayed(sealed_teacher)(
            teacher, *_teacher_data(teacher, X, part, codes[part], fit_params, n_samples),
            X_queries, n_classes,
        )
        for teacher, part in zip(teachers, parts, strict=True)
    )
    votes = np.concatenate(list(
        progress(teacher_votes, total=len(teachers), desc="PATE teachers", enabled=verbose > 0)
    ))
    # Every vote is counted, an abstention with weight 0 (in bin 0 of its query):
    # the same work however many teachers abstain, which depends on the labels
    # (a part of one class abstains).
    cast = votes != ABSTAIN
    bins = np.where(cast, votes, 0) + np.tile(np.arange(queries.size) * n_classes,
                                              len(teachers))
    histograms = np.bincount(bins, weights=cast, minlength=queries.size * n_classes)
    return aggregate(histograms.astype(np.intp).reshape(queries.size, n_classes))


class PATEClassifier(CodeClassifierPredictMixin, BaseLabelDPMetaClassifier):
    """Label-DP classifier distilled from noisily aggregated teachers (PATE).

    The training rows are split at random, independently of the labels, into
    ``n_teachers`` disjoint parts, and a clone of ``estimator`` (a teacher)
    is fitted on each part, in parallel. A random, label-independent subset
    of ``n_queries`` training inputs is labelled by the teachers' votes,
    aggregated with noise:

    - ``"lnmax"``: argmax of the votes plus Laplace(``1 / gamma``) noise
      (Papernot et al. 2017), ``2 gamma``-DP per query, pure
      ``epsilon = 2 gamma Q`` overall;
    - ``"gnmax"``: argmax plus ``N(0, sigma^2)`` noise (Papernot et al.
      2018), a Gaussian mechanism of L2 sensitivity ``sqrt(2 Q)`` over the
      ``Q`` histograms;
    - ``"confident_gnmax"``: a query is answered only when its noisy top vote
      count (std ``sigma1``) reaches ``threshold * n_teachers``, then by GNMax
      with ``sigma2 = sigma1 / sigma_ratio`` (Papernot et al. 2018), paid for
      as if every query were answered.

    The default, ``"auto"``, is GNMax (see Notes).

    A label change alters one teacher's training set, so at most one vote per
    query moves between two bins, or, when that teacher abstains in one world
    (it fails, or its part holds one class), one bin gains or loses a vote
    (L1 and L2 change 1, within the sqrt 2 of a moved vote; the top count
    moves by at most 1 either way): that is the sensitivity the noise covers.
    The noise is calibrated from the target ``epsilon`` (and ``delta`` for the
    Gaussian aggregators) and the number of queries; the guarantee is
    data-independent. The student, a clone of ``student``, learns from the
    answered queries: a semi-supervised student (see below) gets every
    training input, with label ``-1`` (unlabeled) except on the answered
    queries, which under label DP costs nothing since the features are
    public; any other student is fitted on the answered queries only.

    Only differentially private outputs are kept: the student, the answered
    labels and their count. The teachers and the vote histograms are
    non-private functions of the labels (a teacher may memorise its part) and
    are dropped as soon as the votes are aggregated.

    Parameters
    ----------
    estimator : classifier, default=None
        The teacher; cloned once per part. ``None`` means
        ``LogisticRegression(class_weight="balanced")``: each teacher weighs
        the classes of its own part equally, since a part of a few rows is
        unbalanced by chance and a plurality of teachers that rarely predict a
        class answers it even more rarely (King and Zeng 2001 for the
        weights; see Notes). A semi-supervised teacher, by the same test
        as the student's (a ``fit_semi`` method, as a
        :class:`~sklearn_labeldp.nn.LabelDPNetClassifier` trained with
        FixMatch has: PATE-FM; or scikit-learn's ``LabelSpreading``,
        ``LabelPropagation``, ``SelfTrainingClassifier``), learns from its
        part's labels and every other training input unlabeled (``-1``);
        routed ``fit`` metadata then does not reach it. On small data whose
        classes form clusters this is what lets each of many teachers be
        accurate (see the user guide). ``sample_weight`` and routed ``fit``
        metadata go to the teachers, each getting its part's rows. The
        teachers run with ``verbose=0`` (nested estimators' too) and sealed,
        in the worker that fits them: their warnings, printed output and log
        records are dropped. What a teacher does does not depend on the
        labels: every teacher with two rows or more is fitted and votes (a
        part whose labels are all one class is fitted on label-free stand-in
        codes), a teacher that has seen one class only (a part of one class
        or of one row) abstains (casts no vote: its vote would be that class
        on every query, which tells no query from another and only adds to
        the class that fills most parts), and a teacher whose fit or
        prediction raises abstains instead of ending the fit. One teacher,
        on the smallest part (or one holding a missing value), is tried on
        label-free codes before the charge, so a teacher that cannot fit a
        part costs nothing.
    student : classifier, "auto" or None, default="auto"
        Fitted on the answered labels. ``None`` means a clone of the teacher
        (the default before ``"auto"``). ``"auto"``, with a teacher of yours, is
        a clone of it too; with the default teacher it is resolved at fit time
        from public quantities (see Notes): a self-training
        (Yarowsky 1995) logistic regression on standardised features,
        ``SelfTrainingClassifier(make_pipeline(StandardScaler(),
        LogisticRegression(class_weight=w)))``, ``w = "balanced"`` when a
        teacher's part holds fewer than ``10 K`` rows (``n / T < 10 K``), else
        None; without the self-training wrapper when every row is queried, and
        with ``StandardScaler(with_mean=False)`` for a sparse ``X``. The value
        used is the fitted ``student_``. A student counts as semi-supervised
        (and gets all training inputs, ``-1`` for unlabeled) when it has a
        ``fit_semi`` method (a
        :class:`~sklearn_labeldp.nn.LabelDPNetClassifier` trained with
        FixMatch: PATE-FM, Malek et al. 2021), which is then called instead of
        ``fit``, or when it is a ``SelfTrainingClassifier``,
        ``LabelPropagation`` or ``LabelSpreading``, or a ``Pipeline`` ending
        in one. When every answered query got the same label, the student is
        replaced, with a warning, by a ``DummyClassifier`` predicting that
        label (most classifiers, and FixMatch, need two classes).
    n_teachers : int or "auto", default="auto"
        Number of teachers (disjoint parts), at most the number of rows. The
        more teachers, the larger a clear majority in votes, against noise
        that does not depend on their number; the fewer, the more rows each
        teacher learns from. ``"auto"``: the fewest teachers whose vote margin
        covers the answer noise, ``ceil(3.5 sqrt(1 + ln K) sigma)`` for the
        noise std ``sigma`` in votes, at most ``n / max(5, 2 K)`` (see Notes).
    n_queries : int, float or "auto", default="auto"
        Number of queries ``Q``: an int, at most the number of rows, or a
        fraction in (0, 1) of the rows (at least one). Every query is paid
        for, and the noise grows like ``sqrt(Q)``; a warning says when it
        exceeds half the number of teachers. ``"auto"``: the most queries, at
        most ``min(n, 1000)``, whose noise the teachers can cover, and at
        least ``min(n, max(50, 5 K))`` (see Notes).
    aggregator : {"auto", "lnmax", "gnmax", "confident_gnmax"}, default="auto"
        How the votes are turned into labels (see above): LNMax (pure DP),
        GNMax, or Confident-GNMax, which leaves queries without a clear
        majority unlabeled. ``"auto"`` is resolved at fit time to GNMax (see
        Notes); the value used is the fitted ``aggregator_`` and
        ``mechanism_params_["aggregator"]``. It was ``"confident_gnmax"``
        before ``"auto"``: pass it to keep that behaviour.
    epsilon : float, default=1.0
        Target label-DP epsilon of the fit, > 0.
    delta : float, default=1e-5
        Target delta in (0, 1) for the Gaussian aggregators; LNMax is pure DP
        and ignores it (``delta_ = 0``).
    threshold : float, default=0.6
        Confident-GNMax's threshold as a fraction in [0, 1] of ``n_teachers``;
        ignored by the other aggregators (and so by ``"auto"``).
    sigma_ratio : float, default=2.0
        Confident-GNMax's public ratio ``sigma1 / sigma2``, > 0; ignored by
        the other aggregators.
    classes : array-like, default=None
        All possible labels; ``None`` infers them from ``y`` and emits a
        :class:`~sklearn_labeldp.exceptions.PrivacyLeakWarning`.
    random_state : None, "secure", int, numpy.random.Generator or RandomState, default=None
        Randomness of the partition, the queries, the noise and the models'
        unset seeds: fresh entropy for every fit with ``None`` or
        ``"secure"``; an int or generator is a replay key, and pickling a
        model fitted with one warns (see :ref:`randomness`).
    accountant : BudgetAccountant, default=None
        Charged with ``(epsilon_, delta_)`` before any label is used.
    n_jobs : int, default=None
        Teachers fitted in parallel with joblib (``None`` means 1 unless in a
        :func:`joblib.parallel_backend` context). On a Dask cluster, fit inside
        ``joblib.parallel_backend("dask")``: the budget is charged here, on the
        client, before any teacher is submitted, and the workers get their
        parts and return votes only.
    verbose : int, default=0
        Above 0, a tqdm progress bar over the teachers (the ``dask`` extra
        installs tqdm), written to the real stderr: how many are done and the
        time taken. The count is public; the times are a teacher's run time,
        which can follow its part's labels (an optimiser's iterations to
        converge: see the privacy page's residual channels). It does not reach
        the teachers, which always run with ``verbose=0``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    estimator_ : estimator
        The fitted student; predictions delegate to it.
    answered_indices_ : ndarray of shape (n_answered,)
        Training rows of the answered queries.
    answered_labels_ : ndarray of shape (n_answered,)
        Their noisy labels (entries of ``classes_``): the DP release.
    n_answered_ : int
        Number of answered queries (all of them for LNMax and GNMax). When it
        is 0 (Confident-GNMax), the student is a constant classifier with a
        uniform prior, announced by one warning.
    n_teachers_ : int
        The number of teachers used: ``n_teachers``, or the value ``"auto"``
        resolved to.
    n_queries_ : int
        The number of queries used: ``n_queries`` (a fraction resolved
        against ``n``), or the value ``"auto"`` resolved to.
    aggregator_ : str
        The aggregator used: ``aggregator``, or the one ``"auto"`` resolved to
        (``"gnmax"``); the same as ``mechanism_params_["aggregator"]``.
    student_ : estimator
        The student used, unfitted: ``student``, a clone of the teacher for
        None, or the one ``"auto"`` resolved to. ``estimator_`` is its fitted
        clone (or the constant classifier that replaces it, see ``student``).
    mechanism_params_ : dict
        ``"aggregator"`` (as resolved), ``"n_teachers"``, ``"n_queries"`` and
        the calibrated noise: ``"gamma"`` (LNMax's Laplace rate),
        ``"noise_scale"`` (GNMax's sigma) or ``"threshold_noise_scale"`` (sigma1), ``"noise_scale"``
        (sigma2) and ``"threshold"`` in votes (Confident-GNMax).
    epsilon_ : float
        Label-DP epsilon of the fit, at most ``epsilon``.
    delta_ : float
        ``delta`` for the Gaussian aggregators, 0 for LNMax.
    privacy_spend_ : PrivacySpend
        A sequential record ``"PATE"`` holding the aggregator's leaf; the
        Gaussian ones carry ``gaussian`` (their sensitivity in noise stds,
        composed exactly by
        :meth:`~sklearn_labeldp.accounting.BudgetAccountant.total` with a ``slack``)
        and ``rho``.
    n_features_in_ : int
        The final model's, when it has one (as for ``OneVsRestClassifier``).
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        The final model's, when it has them (``X`` a DataFrame with string
        column names; ``X`` goes to the base estimator as given).

    Notes
    -----
    The ``"auto"`` counts are resolved at fit time from public quantities
    only: the number of rows ``n``, the number of classes ``K``, ``epsilon``,
    ``delta``, the aggregator and ``sigma_ratio``, through the noise std
    ``sigma(Q)`` on each vote bin that the calibration gives for ``Q``
    queries. Following Papernot et al. (2017, 2018), an answer is useful when
    the noise is small against the plurality's margin, which grows with the
    number of teachers (``T >= c sigma``, ``c = 3.5 sqrt(1 + ln K)``;
    Papernot et al. 2018 run ``T / sigma`` of about 6 on MNIST), and when each
    teacher has enough rows to be accurate (``n / T >= max(5, 2 K)``). ``Q``
    is the largest count up to ``min(n, 1000)`` meeting both, and at least
    ``min(n, max(50, 5 K))``, the few labels per class a student needs to tell the
    classes apart; ``T`` the fewest teachers meeting the first. Keeping
    ``T / sigma`` fixed keeps the share of confident answers about the same at
    every epsilon, so a larger epsilon buys more queries (and more answers),
    never fewer. A
    count you pass is used as given, and the other is resolved against it.
    Measured figures are in the user guide.

    ``aggregator="auto"`` is GNMax, whatever the data: every query is paid
    for whether it is answered or not (the guarantee is data-independent),
    so Confident-GNMax's selection buys no privacy here, unlike under the
    data-dependent analysis of Papernot et al. (2018); it spends part of the
    budget (at ``sigma_ratio=2`` its ``sigma2`` is 6% above GNMax's
    ``sigma``) and discards the answers it does not select. On the digits
    and five synthetic sets, at epsilon 1 to 16, with two students, at the
    ``"auto"`` counts and at counts where the selection is informative (30
    teachers, 50 queries), GNMax was ahead in 55 of 72 settings (by up to 20
    points), level in 10 and behind in 7 (by at most 4 points).

    ``student="auto"`` (with the default teacher) is a self-training
    logistic regression: the training rows that are not queried are
    unlabeled data whose features are public, as for the semi-supervised
    students of Papernot et al. (2017), and self-training (Yarowsky 1995)
    adds the rows its base labels confidently and otherwise keeps to the
    base. Its class weights are balanced when the teachers' parts hold
    fewer than ``10 K`` rows: such teachers rarely see a minority class, so
    their plurality rarely answers it, and an unweighted student then
    predicts the majority class alone; with larger parts the weights would
    only trade accuracy for balanced accuracy. Both choices read only ``n``,
    ``K``, the resolved counts and whether ``X`` is sparse. On the digits at
    epsilon 8 (75/25 splits) the defaults reach 0.889 where the former
    defaults (``LogisticRegression()`` teachers and student,
    Confident-GNMax) reached 0.856. A graph-based student,
    ``LabelSpreading`` (Zhou et al. 2004), did better on the digits (0.887
    against 0.870 on 70/30 splits) but worse in 14 of 15 settings of the
    synthetic sets (by up to 12 points; the majority class alone on an
    85/15 set), and neither ``n``, ``K`` nor the answers per class told
    those sets apart: pass it as ``student`` where the classes form clusters
    in the features.

    The default teacher weighs its part's classes equally. On imbalanced
    data this is what keeps a minority class in the plurality: on an 85/15
    set of 300 rows at epsilon 8 the former defaults predicted the majority
    class alone (balanced accuracy 0.5), the defaults reach 0.669. On UCI
    Adult (76/24) it trades accuracy for balanced accuracy: 0.812 to 0.827
    against 0.807 to 0.844 before, and 0.740 to 0.805 against 0.615 to 0.735,
    at epsilon 0.5 to 8.

    A teacher whose part holds one class only abstains (it is still fitted,
    on stand-in codes, so the work does not depend on the labels). Its vote
    would be that class on every query: it tells no query from another and
    only adds to the class that fills most parts. With the parts of 5 rows
    the counts give a few hundred rows, a 10% class is missing from 59% of
    the parts, and those constant votes made the plurality answer the
    majority class on nearly every query, whatever the teachers that had
    seen both classes said: on 300-row 90/10 sets at epsilon 4 the student
    predicted the majority class alone (median balanced accuracy 0.500 over
    9 splits). With them abstaining, the balanced accuracy on 300-row 85/15
    and 90/10 sets is 0.66 to 0.74 at epsilon 4 and 0.74 to 0.79 at epsilon
    8 (0.50 to 0.67 before), at the cost of accuracy: 0.65 to 0.74, where
    the majority class alone scores 0.85 to 0.90 (the trade a balanced
    student makes too; a balanced non-private logistic regression scores
    0.83 to 0.86). On 2,000 rows of 85/15 data at epsilon 1 and 2 (parts of
    5 rows again) accuracy falls from 0.85 to 0.74 and 0.73 and balanced
    accuracy rises from 0.69 and 0.72 to 0.74 and 0.78; at epsilon 8 (16
    rows a part) they are 0.855 and 0.795, against 0.868 and 0.798. On
    balanced data, the digits and UCI Adult, where parts of one class are
    rare, the results are unchanged (``benchmarks/pate_defaults.py
    abstain``).

    The recorded epsilon of the Gaussian aggregators is exact: the ``Q``
    histograms (and the selection's maxima) form one Gaussian mechanism of
    L2 sensitivity ``sqrt(2 Q) / sigma`` noise stds (``sqrt(Q / sigma1^2 + 2 Q
    / sigma2^2)`` for Confident-GNMax), accounted by its exact privacy
    profile (Balle and Wang 2018), equal to its privacy loss distribution;
    the noise is calibrated by the same profile.

    References
    ----------
    .. [1] N. Papernot, M. Abadi, U. Erlingsson, I. Goodfellow, K. Talwar.
       Semi-supervised knowledge transfer for deep learning from private
       training data. ICLR 2017.
    .. [2] N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar,
       U. Erlingsson. Scalable private learning with PATE. ICLR 2018.
    .. [3] M. Malek, I. Mironov, K. Prasad, I. Shilov, F. Tramer. Antipodes of
       label differential privacy: PATE and ALIBI. NeurIPS 2021.
    .. [4] B. Balle, Y.-X. Wang. Improving the Gaussian mechanism for
       differential privacy: analytical calibration and optimal denoising.
       ICML 2018.
    .. [5] D. Yarowsky. Unsupervised word sense disambiguation rivaling
       supervised methods. ACL 1995.
    .. [6] G. King, L. Zeng. Logistic regression in rare events data.
       Political Analysis 9(2), 2001.
    .. [7] D. Zhou, O. Bousquet, T. N. Lal, J. Weston, B. Schoelkopf.
       Learning with local and global consistency. NIPS 2004.

    Examples
    --------
    >>> from sklearn.semi_supervised import LabelSpreading
    >>> from sklearn_labeldp.classifiers import PATEClassifier
    >>> from sklearn_labeldp.datasets import make_circle_gaussians
    >>> X, y = make_circle_gaussians(2000, 3, sigma=0.2, random_state=0)
    >>> clf = PATEClassifier(student=LabelSpreading(), n_teachers=50, n_queries=30,
    ...                      epsilon=4.0, classes=range(3), random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.8), clf.delta_
    (True, 1e-05)
    """

    # The aggregator's output: the answers and, for Confident-GNMax, which
    # queries were answered (a noisy function of the votes, so a DP output too,
    # not public data). The teachers and the vote histograms never leave
    # `_pate_release`. The student is fitted on the answers and public inputs
    # only, and `n_answered_` is the length of `answered_indices_`.
    _passes_X_through = True  # X reaches the base estimator as given
    _dp_outputs = ("answered_indices_", "answered_labels_")
    _derived_attributes = (
        *BaseLabelDPMetaClassifier._derived_attributes,
        "estimator_",
        "n_answered_",
        "n_teachers_",
        "n_queries_",
        "aggregator_",
        "student_",
    )

    _parameter_constraints: dict = {
        **BaseLabelDPMetaClassifier._parameter_constraints,
        "student": [HasMethods(["fit", "predict"]), StrOptions({"auto"}), None],
        "n_teachers": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "n_queries": [
            Interval(Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="neither"),
            StrOptions({"auto"}),
        ],
        "aggregator": [StrOptions({*AGGREGATORS, "auto"})],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "threshold": [Interval(Real, 0, 1, closed="both")],
        "sigma_ratio": [Interval(Real, 0, None, closed="neither")],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        student="auto",
        n_teachers="auto",
        n_queries="auto",
        aggregator="auto",
        epsilon=1.0,
        delta=1e-5,
        threshold=0.6,
        sigma_ratio=2.0,
        classes=None,
        random_state=None,
        accountant=None,
        n_jobs=None,
        verbose=0,
    ):
        self.estimator = estimator
        self.student = student
        self.n_teachers = n_teachers
        self.n_queries = n_queries
        self.aggregator = aggregator
        self.epsilon = epsilon
        self.delta = delta
        self.threshold = threshold
        self.sigma_ratio = sigma_ratio
        self.classes = classes
        self.random_state = random_state
        self.accountant = accountant
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _default_estimator(self):
        # Balanced per part: a part of a few rows is unbalanced by chance even on
        # balanced data, and a teacher that never predicts a class its part holds
        # once takes that class out of the plurality (see the user guide).
        return LogisticRegression(class_weight="balanced")

    def _expected_failed_checks(self):
        # See sklearn_labeldp.utils.expected_failed_checks.
        return {**super()._expected_failed_checks(), **dict.fromkeys(
            SAMPLE_WEIGHT_EQUIVALENCE,
            "rows are drawn one by one into the teachers' parts and the queries: an "
            "example repeated twice can land in two parts, one with weight 2 in one")}

    def _resolve_student(self, n_samples, n_classes, n_teachers, n_queries, sparse_X=False):
        """The student template: ``student``, the teacher for None, or the "auto" rule's."""
        if self.student is None:
            return clone(self._get_estimator())
        if isinstance(self.student, str):  # "auto"
            return _auto_student(self.estimator, n_samples, n_classes, n_teachers, n_queries,
                                 sparse_X)
        return self.student

    def _resolve_aggregator(self):
        return _auto_aggregator() if self.aggregator == "auto" else self.aggregator

    def _final_estimator_template(self):
        # Before a fit, for the methods it offers (predict_proba): "auto" with the
        # default teacher resolves to a self-training student whatever the counts.
        return self._resolve_student(2, 2, 1, 1)

    def _try_teacher(self, X, n_classes, plan, fit_params):
        """Fit one teacher on what a teacher gets, with label-free codes, and let it vote.

        The teachers' template (quiet, see :meth:`_quiet_teacher`) is fitted on
        a part that a teacher is fitted on (a part of one row votes its label
        without a fit), as :func:`_teacher_data` sends it: the part's rows, or
        every row with ``-1`` outside the part for a semi-supervised teacher,
        the part's rows coded ``0, 1, ..., K - 1, 0, ...``; then it votes on
        the queries, and its votes must be such codes. The part is one holding
        a row with a missing or infinite value where there is one, else the
        smallest. So a teacher that can fit its real part is not refused for
        want of rows, and one that cannot fit a part, or does not vote class
        codes, fails here, before the charge; after it, such a teacher would
        abstain (:func:`_teacher_votes`). Only its number of training epochs is
        cut to one (:func:`quick_trial`).
        """
        fitted_parts = [part for part in plan["parts"] if part.size >= 2]
        if not fitted_parts:
            return
        # A part holding a row with a missing value, if any (a teacher that refuses
        # such rows must fail here, not abstain after the charge), else the smallest.
        missing = _rows_with_missing_values(X)
        part = next((part for part in fitted_parts if np.isin(part, missing).any()),
                    min(fitted_parts, key=len))
        teacher = quick_trial(seed_estimator(clone(plan["teacher"]), np.random.default_rng(0)))
        X_train, targets, params = _teacher_data(
            teacher, X, part, trial_codes(part.size, n_classes), fit_params, _num_samples(X))
        X_queries = _safe_indexing(X, plan["queries"])

        def vote():
            votes = np.asarray(
                fit_semi_supervised_targets(teacher, X_train, targets, params).predict(X_queries))
            if votes.shape != (_num_samples(X_queries),) or not np.isin(votes, targets).all():
                raise ValueError(
                    "its votes on the queries are not one class code it was fitted on per "
                    "query; PATE needs a classifier as `estimator`."
                )

        trial_fit(self, vote, estimator=teacher, where=f"the {part.size} rows of a teacher's part")

    def _check_before_charge(self, X, n_classes, plan, fit_params):
        """Trial-fit a teacher (see :meth:`_try_teacher`) and the student on label-free targets."""
        for name, model in (("estimator", self._get_estimator()), ("student", plan["student"])):
            if not is_classifier(model):
                raise ValueError(
                    f"{type(self).__name__}: `{name}` must be a classifier, whose votes or "
                    f"predictions are class labels; got {type(model).__name__}."
                )
        self._try_teacher(X, n_classes, plan, fit_params)
        if plan["queries"].size < 2:
            return  # one answer is one class: the student is then a constant classifier
        # The student gets what the real fit gives it (see _fit_private): the
        # queries' rows, or every row with -1 outside the queries.
        student = quick_trial(
            seed_estimator(clone(plan["student"]), np.random.default_rng(0))
        )
        queries = plan["queries"]
        X_student, targets, _ = _teacher_data(
            student, X, queries, trial_codes(queries.size, n_classes), {}, _num_samples(X))

        def fit():
            fit_semi_supervised_targets(student, X_student, targets, {})
            student.predict(_safe_indexing(X_student, [0]))

        trial_fit(self, fit, estimator=student, parameter="student", role="student",
                  where=f"the rows it gets ({_num_samples(X_student)})")

    def _quiet_teacher(self):
        """The teachers' template: the base estimator with every ``verbose`` at 0.

        Built while planning, before the charge, so that an estimator that
        refuses ``verbose=0`` costs nothing. Only the teachers are quieted:
        the student learns from the DP answers, so what it prints is
        post-processing and it keeps the user's configuration.
        """
        try:
            return quiet(clone(self._get_estimator()))
        except Exception as exc:
            raise ValueError(
                f"{type(self).__name__}: the teacher (parameter `estimator`, "
                f"{type(self._get_estimator()).__name__}) must accept verbose=0 on itself "
                "and on its nested estimators, since a teacher's output is computed from "
                f"private labels; setting it failed, so no budget was spent: {exc}"
            ) from exc

    def _vote_setting(self, n_queries, n_teachers):
        return VoteSetting(
            epsilon=self.epsilon,
            delta=self.delta,
            n_queries=n_queries,
            n_teachers=n_teachers,
            threshold=self.threshold,
            sigma_ratio=self.sigma_ratio,
        )

    def _resolve_counts(self, n_samples, n_classes):
        """``(n_teachers, n_queries)``: the given ones, ``"auto"`` resolved from public quantities.

        See :func:`_auto_teachers_and_queries`; the answer noise it trades
        against is the aggregator's calibration at each candidate ``Q``, which
        depends on ``epsilon``, ``delta`` and ``sigma_ratio`` only.
        """
        n_queries = self.n_queries
        if isinstance(n_queries, Real) and not isinstance(n_queries, Integral):
            n_queries = max(1, int(n_queries * n_samples))
        for name, value in (("n_teachers", self.n_teachers), ("n_queries", n_queries)):
            if value != "auto" and value > n_samples:
                raise ValueError(
                    f"{name}={value} exceeds the number of training rows ({n_samples})."
                )
        aggregator = AGGREGATORS[self._resolve_aggregator()]

        @functools.cache
        def noise_std(q):
            # n_teachers only scales the threshold, not the noise: any value serves.
            return aggregator.answer_std(aggregator.calibrate(self._vote_setting(q, 1)))

        return _auto_teachers_and_queries(
            n_samples, n_classes, noise_std, self.n_teachers, n_queries
        )

    def _plan_fit(self, X, classes, rng):
        n_samples = _num_samples(X)
        # Every "auto" is resolved here, from n, K, epsilon, delta and the
        # parameters only: no label has been read.
        aggregator_name = self._resolve_aggregator()
        n_teachers, n_queries = self._resolve_counts(n_samples, len(classes))
        student = self._resolve_student(n_samples, len(classes), n_teachers, n_queries,
                                        issparse(X))
        # Both drawn from the plan stream, before and independently of any label.
        parts = np.array_split(rng.permutation(n_samples), n_teachers)
        queries = np.sort(rng.choice(n_samples, size=n_queries, replace=False))
        aggregator = AGGREGATORS[aggregator_name]
        setting = self._vote_setting(n_queries, n_teachers)
        params = {
            "aggregator": aggregator_name,
            "n_teachers": n_teachers,
            "n_queries": n_queries,
            **aggregator.calibrate(setting),
        }
        leaf = aggregator.privacy_spend(setting, params)
        self._warn_if_noise_drowns_votes(aggregator, params)
        spend = PrivacySpend.compose("PATE", [leaf], "sequential", n_teachers=n_teachers)
        plan = {
            "parts": parts,
            "queries": queries,
            "params": params,
            "classes": classes,
            "teacher": self._quiet_teacher(),
            "student": student,
            "aggregator": aggregator,
        }
        return spend, plan

    def _warn_if_noise_drowns_votes(self, aggregator, params):
        """Warn, before any charge, when the answers would be mostly noise.

        The labelling noise's std per bin (``sigma``, ``sigma2``, or ``sqrt 2 /
        gamma`` for Laplace) is compared with half the number of teachers, the
        margin of a clear majority: above it, most answers are noise.
        Confident-GNMax's selection noise ``sigma1`` is compared with its
        threshold: above it, which queries are answered is mostly noise too
        (Papernot et al. 2018 run ``sigma1`` at three quarters of the
        threshold on MNIST: 150 against 200 votes).
        """
        std = aggregator.answer_std(params)
        selection = aggregator.selection_noise(params)
        n_teachers = params["n_teachers"]
        problems = []
        if std > n_teachers / 2:
            problems.append(
                f"the vote noise has std {std:.1f} votes for {n_teachers} teachers: "
                "most answers will be noise"
            )
        if selection is not None and selection[0] > selection[1]:
            problems.append(
                f"the selection noise has std {selection[0]:.1f} votes above the "
                f"threshold of {selection[1]:.1f} votes: which queries are answered "
                "will be mostly noise"
            )
        if problems:
            warnings.warn(
                f"{type(self).__name__}: with {params['n_queries']} queries at "
                f"epsilon={self.epsilon}, " + "; ".join(problems) + ". Use more teachers, "
                "fewer queries or a larger epsilon (the noise grows like sqrt(n_queries) "
                "/ epsilon).",
                UserWarning,
                stacklevel=5,
            )

    def _fit_private(self, X, labels, plan, fit_params, mechanism_rng, estimator_rng):
        params, queries, aggregator = plan["params"], plan["queries"], plan["aggregator"]
        noise_rng, teacher_rng = spawn_generators(mechanism_rng, 2)
        teachers = [seed_estimator(clone(plan["teacher"]), teacher_rng) for _ in plan["parts"]]
        answers = labels.release(
            _pate_release,
            np.arange(labels.n_samples),
            failure=_TEACHER_FAILURE,
            X=X,
            parts=plan["parts"],
            queries=queries,
            teachers=teachers,
            fit_params=fit_params,
            n_classes=labels.n_classes,
            n_jobs=self.n_jobs,
            verbose=self.verbose,
            aggregate=lambda votes: aggregator.aggregate(votes, params, noise_rng),
        )
        # Everything below is post-processing of `answers`: no label is read again.
        answered = answers >= 0
        student = seed_estimator(clone(plan["student"]), estimator_rng)
        if not answered.any():
            # A DP outcome (Confident-GNMax answers nothing when no noisy top vote
            # reaches the threshold), not an error: the fit ends with a student that
            # learnt nothing private, and says what to change.
            warnings.warn(
                f"{type(self).__name__}: no query was answered, so the student is a "
                "constant classifier with a uniform prior (it predicts classes_[0]); the "
                "budget is spent. The teachers' top vote rarely reached the threshold: "
                "lower `threshold`, give each teacher more rows (fewer `n_teachers`), or "
                "use aggregator='gnmax', which answers every query.",
                UserWarning,
                stacklevel=2,
            )
            rows = np.arange(min(labels.n_classes, _num_samples(X)))
            # Every class once, on public rows: a label-free uniform prior.
            student = DummyClassifier(strategy="prior").fit(_safe_indexing(X, rows), rows)
            return self._fitted(student, queries, answers, answered, params, plan)
        if np.unique(answers[answered]).size == 1:
            # Most classifiers refuse a single class; the answers then say only that.
            warnings.warn(
                f"{type(self).__name__}: every answered query got the same label, so the "
                "student is replaced by a constant classifier predicting it.",
                UserWarning,
                stacklevel=2,
            )
            student = DummyClassifier(strategy="most_frequent")
        if learns_semi_supervised(student):
            targets = np.full(_num_samples(X), -1, dtype=np.intp)
            targets[queries] = answers
            fit_semi_supervised_targets(student, X, targets, {})
        else:
            student.fit(_safe_indexing(X, queries[answered]), answers[answered])
        return self._fitted(student, queries, answers, answered, params, plan)

    @staticmethod
    def _fitted(student, queries, answers, answered, params, plan):
        return {
            "estimator_": student,
            "answered_indices_": queries[answered],
            "answered_labels_": plan["classes"].take(answers[answered]),
            "n_answered_": int(answered.sum()),
            "n_teachers_": params["n_teachers"],
            "n_queries_": params["n_queries"],
            "aggregator_": params["aggregator"],
            # Unfitted, as resolved from public quantities (estimator_ is the fitted one).
            "student_": clone(plan["student"]),
            "mechanism_params_": params,
        }
