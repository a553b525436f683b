#!/usr/bin/python3
"""ops-secrets: canonical/operator's test_secrets charm flow (add-secret,
add-with-meta, set-secret-flow, get_content / peek_content / get_info),
a grant to a related service, secret-changed on the consumer and
secret-remove on the owner. The step option picks the owner's step; each
step is a method, as the test charm's actions are."""

import datetime
import itertools
import json
import os

import ops

OUT = "secrets.json"
SHARED = "shared"


def record(key, value):
    """Keeps one snapshot in secrets.json, for the test to read."""
    data = {}
    if os.path.exists(OUT):
        with open(OUT) as f:
            data = json.load(f)
    data[key] = value
    with open(OUT, "w") as f:
        json.dump(data, f, sort_keys=True)


def log_event():
    """Appends "hook [secret id [label [revision]]]" to events.log."""
    hook = os.environ.get("JUJU_DISPATCH_PATH", "").rsplit("/", 1)[-1]
    parts = [hook] + [os.environ[v] for v in ("JUJU_SECRET_ID", "JUJU_SECRET_LABEL", "JUJU_SECRET_REVISION") if os.environ.get(v)]
    with open("events.log", "a") as f:
        f.write(" ".join(parts) + "\n")


def info_dict(info):
    return {
        "label": info.label,
        "revision": info.revision,
        "expires": info.expires.isoformat() if info.expires else None,
        "rotation": info.rotation.value if info.rotation else None,
        "description": info.description,
    }


def snapshot(secret):
    """What test_secrets' actions return: content, peeked content, info."""
    return {"id": secret.id, "content": secret.get_content(), "peek": secret.peek_content(), "info": info_dict(secret.get_info())}


class SecretsCharm(ops.CharmBase):
    def __init__(self, framework):
        super().__init__(framework)
        log_event()
        framework.observe(self.on.config_changed, self._on_config_changed)
        framework.observe(self.on.use_relation_changed, self._on_use_changed)
        framework.observe(self.on.secret_changed, self._on_secret_changed)
        framework.observe(self.on.secret_remove, self._on_secret_remove)

    # The owner's steps.

    def _on_config_changed(self, event):
        step = self.config.get("step", "")
        if not step or not self.unit.is_leader() or self.model.get_relation("share") is None and step == "share":
            return
        getattr(self, "step_" + step)()

    def step_add(self):
        """add-secret, add-with-meta for every combination, set-secret-flow."""
        record("add-secret", snapshot(self.app.add_secret({"foo": "bar"})))
        expire = datetime.datetime(2030, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
        combos = {}
        for label, description, exp, rotate in itertools.product((None, "a-label"), (None, "a description"), (None, expire), (None, ops.SecretRotate.DAILY)):
            name = "-".join(k for k, v in (("label", label), ("description", description), ("expire", exp), ("rotate", rotate)) if v) or "none"
            lbl = label and label + "-" + name
            secret = self.app.add_secret({"foo": name}, label=lbl, description=description, expire=exp, rotate=rotate)
            combos[name] = snapshot(secret)
        record("add-with-meta", combos)
        record("set-secret-flow", self.set_secret_flow())
        self.app.add_secret({"password": "owner-value-v1-5d1e"}, label=SHARED, description="shared with the user")
        record("unit-secret", snapshot(self.unit.add_secret({"mine": "unit-owned"}, label="unit-secret")))

    def set_secret_flow(self):
        secret = self.app.add_secret({"foo": "bar"}, label="flow")
        before = snapshot(secret)
        secret.set_content({"foo": "baz"})
        secret.set_info(description="set in the flow")
        return {"before": before, "after": snapshot(self.model.get_secret(label="flow"))}

    def step_share(self):
        """Grants the shared secret over share and names it there."""
        secret = self.model.get_secret(label=SHARED)
        relation = self.model.get_relation("share")
        secret.grant(relation)
        relation.data[self.app]["secret-id"] = secret.id
        record("shared", {"id": secret.id})

    def step_update(self):
        """A new revision of the shared secret, and of the flow's."""
        self.model.get_secret(label=SHARED).set_content({"password": "owner-value-v2-8a2c"})
        flow = self.model.get_secret(label="flow")
        flow.set_content({"foo": "qux"})
        record("updated", {"flow": snapshot(flow)})

    def _on_secret_remove(self, event):
        record("removed-" + str(event.revision), {"id": event.secret.id, "label": event.secret.label})
        event.remove_revision()

    # The user's side.

    def _on_use_changed(self, event):
        secret_id = event.relation.data[event.app].get("secret-id")
        if not secret_id:
            return
        secret = self.model.get_secret(id=secret_id, label="from-owner")
        record("consumer-content", secret.get_content())

    def _on_secret_changed(self, event):
        record("changed-tracked", event.secret.get_content())
        record("changed-peek", event.secret.peek_content())
        record("changed-refreshed", event.secret.get_content(refresh=True))
        record("changed-label", event.secret.label)


if __name__ == "__main__":
    ops.main(SecretsCharm)
