"""An import placeholder for the `minio` client library, for the juju
conformance test.

canonical/operator's test/integration/conftest.py imports minio at module
level for its tracing fixtures (tracing_juju), which make a bucket in a
MinIO deployed on Kubernetes. None of test_secrets.py, test_relation.py or
test_hookcmds.py uses those fixtures, so nothing here is ever called: the
module exists only so that the conftest imports. Using it fails loudly.
"""


class Minio:
    """Refuses to be used: the conformance test runs no tracing test."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(
            "minio is an import placeholder in the juju conformance test: "
            "the tracing tests that use it are not among the files it runs"
        )
