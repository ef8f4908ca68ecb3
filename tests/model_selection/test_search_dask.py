"""The private search's candidates on a Dask cluster: one charge on the client."""

import os
import uuid

import pytest

distributed = pytest.importorskip("distributed")

from joblib import parallel_backend  # noqa: E402
from sklearn.neighbors import KNeighborsClassifier  # noqa: E402

from sklearn_labeldp import BudgetAccountant, PrivateGridSearchCV, RRWithPriorClassifier  # noqa: E402
from sklearn_labeldp.datasets import make_circle_gaussians  # noqa: E402

pytestmark = pytest.mark.dask_cluster


class PidKNN(KNeighborsClassifier):
    """k-NN that writes the id of the process it is fitted in to ``log_dir``."""

    def __init__(self, n_neighbors=5, *, log_dir=None):
        super().__init__(n_neighbors=n_neighbors)
        self.log_dir = log_dir

    def fit(self, X, y):
        with open(os.path.join(self.log_dir, uuid.uuid4().hex), "w") as log:
            log.write(str(os.getpid()))
        return super().fit(X, y)


def _pid(_):
    return os.getpid()


@pytest.mark.parametrize("strategy", ["holdout", "random_stopping", "post_processing"])
def test_candidates_run_in_the_workers_and_the_search_charges_once_here(strategy, tmp_path):
    X, y = make_circle_gaussians(900, 3, sigma=0.3, random_state=0)
    acc = BudgetAccountant()  # process-local: a charge in a worker would fail
    base = RRWithPriorClassifier(PidKNN(log_dir=str(tmp_path)), classes=[0, 1, 2])
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, host="127.0.0.1") as cluster, \
            distributed.Client(cluster) as client:
        workers = set(client.gather(client.map(_pid, range(8), pure=False)))
        search = PrivateGridSearchCV(base, {"estimator__n_neighbors": [3, 7, 15]},
                                     epsilon=1.0, strategy=strategy, accountant=acc, n_jobs=2)
        with parallel_backend("dask"):
            search.fit(X, y)
    pids = {int(path.read_text()) for path in tmp_path.iterdir()}
    assert pids & workers  # some candidate fits ran in the workers
    assert len(acc.spends) == 1 and acc.total().epsilon == pytest.approx(1.0)
