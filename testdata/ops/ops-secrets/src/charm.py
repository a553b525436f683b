#!/usr/bin/python3
"""ops-secrets: canonical/operator's test_secrets flow, driven by actions.

The owner's actions add secrets (with every combination of label,
description, expire and rotate), change them one field after another,
share one over a relation, revoke it and remove revisions; each returns
snapshots (tracked and latest content, and for the owner get_info) as
its results. The consumer's hooks (use-relation-changed, secret-changed)
and the owner's secret-remove record what they saw, which the seen action
returns. Every value is a constant a test knows; the credential's values
come back as a digest, never in the clear, as a real charm would report
a password.
"""

import datetime
import hashlib
import json
import os

import ops

SEEN = "seen.json"
CREDENTIAL_LABEL = "shared"
CONSUMER_LABEL = "from-owner"
# The credential's revisions: add-credential adds the first, each content
# step of a credential flow sets the next.
CREDENTIALS = ["owner-value-v1-5d1e", "owner-value-v2-8a2c", "owner-value-v3-17f0", "owner-value-v4-c3b9"]
EXPIRE = datetime.datetime(2030, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
ROTATIONS = [ops.SecretRotate.NEVER, ops.SecretRotate.HOURLY, ops.SecretRotate.WEEKLY, ops.SecretRotate.MONTHLY]


def digest(value):
    """What results show of a credential: a short digest of it."""
    return "sha256:" + hashlib.sha256(value.encode()).hexdigest()[:16]


def shown(content):
    """Content as results show it: password values as digests."""
    return {k: digest(v) if k == "password" else v for k, v in content.items()}


def info_of(info):
    """get_info as results show it; a field that is None is left out."""
    out = {
        "id": info.id,
        "label": info.label,
        "revision": info.revision,
        "expires": info.expires.isoformat() if info.expires else None,
        "rotation": info.rotation.value if info.rotation else None,
        "description": info.description,
    }
    return {k: v for k, v in out.items() if v is not None}


def record(entry):
    """Appends one observation to seen.json, in the charm directory."""
    seen = []
    if os.path.exists(SEEN):
        with open(SEEN) as f:
            seen = json.load(f)
    seen.append({k: v for k, v in entry.items() if v is not None})
    with open(SEEN, "w") as f:
        json.dump(seen, f, sort_keys=True)


class SecretsCharm(ops.CharmBase):
    def __init__(self, framework):
        super().__init__(framework)
        framework.observe(self.on.start, self._on_start)
        for action in ("add-secret", "add-with-meta", "set-secret-flow", "add-credential", "share", "revoke", "get-secret", "remove-secret", "seen"):
            framework.observe(self.on[action].action, getattr(self, "_" + action.replace("-", "_")))
        framework.observe(self.on.use_relation_changed, self._on_use_changed)
        framework.observe(self.on.secret_changed, self._on_secret_changed)
        framework.observe(self.on.secret_remove, self._on_secret_remove)

    def _on_start(self, event):
        self.unit.status = ops.ActiveStatus()

    def snapshot(self, secret_id):
        """test_secrets' snapshot: tracked and latest content, and the
        owner's get_info."""
        secret = self.model.get_secret(id=secret_id)
        return {"tracked": shown(secret.get_content()), "latest": shown(secret.peek_content()), "info": info_of(secret.get_info())}

    def lookup(self, params):
        """The secret params name, by id or by label."""
        if bool(params.get("secretid")) == bool(params.get("secretlabel")):
            raise ValueError("give one of secretid and secretlabel")
        if params.get("secretid"):
            return self.model.get_secret(id=params["secretid"])
        return self.model.get_secret(label=params["secretlabel"])

    # The owner's actions.

    def _add_secret(self, event):
        owner = self.app if event.params["owner"] == "application" else self.unit
        secret = owner.add_secret({"foo": "bar"})
        event.set_results({"secretid": secret.id, "after": self.snapshot(secret.id)})

    def _add_with_meta(self, event):
        fields = {f for f in event.params["fields"].split(",") if f}
        meta = {"label": "label1", "description": "description1", "expire": EXPIRE, "rotate": ops.SecretRotate.DAILY}
        unknown = fields - meta.keys()
        if unknown:
            event.fail(f"unknown fields {sorted(unknown)}")
            return
        secret = self.app.add_secret({"foo": "bar"}, **{k: v for k, v in meta.items() if k in fields})
        event.set_results({"secretid": secret.id, "after": self.snapshot(secret.id)})

    def _set_secret_flow(self, event):
        secret = self.lookup(event.params)
        secret_id = secret.get_info().id
        before = self.snapshot(secret_id)
        steps = {"content": 0, "label": 0, "description": 0, "expire": 0, "rotate": 0}
        for field in event.params["flow"].split(","):
            if field not in steps:
                event.fail(f"unknown step {field!r}")
                return
            steps[field] += 1
            n = steps[field]
            if field == "content":
                secret.set_content({"password": CREDENTIALS[n]} if event.params["credential"] else {"val": str(n)})
            elif field == "label":
                secret.set_info(label=f"label{n}")
            elif field == "description":
                secret.set_info(description=f"description{n}")
            elif field == "expire":
                secret.set_info(expire=EXPIRE.replace(year=EXPIRE.year + n))
            else:
                secret.set_info(rotate=ROTATIONS[n - 1])
        event.set_results({"secretid": secret_id, "before": before, "after": self.snapshot(secret_id)})

    def _add_credential(self, event):
        secret = self.app.add_secret({"password": CREDENTIALS[0]}, label=CREDENTIAL_LABEL, description="the credential")
        event.set_results({"secretid": secret.id, "after": self.snapshot(secret.id)})

    def _share(self, event):
        secret = self.model.get_secret(label=event.params["secretlabel"])
        relation = self.model.get_relation("share")
        secret.grant(relation)
        relation.data[self.app]["secret-id"] = secret.id
        event.set_results({"secretid": secret.id, "relation": str(relation.id)})

    def _revoke(self, event):
        secret = self.model.get_secret(label=event.params["secretlabel"])
        secret.revoke(self.model.get_relation("share"))
        event.set_results({"secretid": secret.id})

    def _remove_secret(self, event):
        secret = self.model.get_secret(id=event.params["secretid"])
        if event.params["revision"]:
            secret.remove_revision(event.params["revision"])
        else:
            secret.remove_all_revisions()
        event.set_results({"secretid": secret.id})

    # Either side's.

    def _get_secret(self, event):
        try:
            secret = self.lookup(event.params)
            mode = event.params["mode"]
            if mode == "peek":
                content = secret.peek_content()
            else:
                content = secret.get_content(refresh=mode == "refresh")
        except ops.SecretNotFoundError:
            event.fail("secret not found")
            return
        results = {"content": shown(content)}
        try:
            results["info"] = info_of(secret.get_info())
        except (ops.SecretNotFoundError, ops.ModelError):
            pass  # a consumer has no get_info
        event.set_results(results)

    def _seen(self, event):
        seen = []
        if os.path.exists(SEEN):
            with open(SEEN) as f:
                seen = json.load(f)
        event.set_results({"count": len(seen), "seen": {str(i): e for i, e in enumerate(seen)}})

    # The consumer's hooks.

    def _on_use_changed(self, event):
        secret_id = event.relation.data[event.app].get("secret-id")
        if not secret_id:
            return
        secret = self.model.get_secret(id=secret_id, label=CONSUMER_LABEL)
        record({"hook": "use-relation-changed", "id": secret_id, "tracked": shown(secret.get_content())})

    def _on_secret_changed(self, event):
        # The consumer keeps tracking its revision: the refresh is the
        # get-secret action's, so that the owner's secret-remove follows it.
        record({
            "hook": "secret-changed",
            "id": event.secret.id,
            "label": event.secret.label,
            "tracked": shown(event.secret.get_content()),
            "latest": shown(event.secret.peek_content()),
        })

    # The owner's hook.

    def _on_secret_remove(self, event):
        record({"hook": "secret-remove", "id": event.secret.id, "label": event.secret.label, "revision": event.revision})
        event.remove_revision()


if __name__ == "__main__":
    ops.main(SecretsCharm)
