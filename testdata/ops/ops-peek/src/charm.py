#!/usr/bin/python3
"""ops-peek: never sets a status; appends "event units=[...] status=name:message"
to peek.log for every event, as ops's model shows them."""

import os

import ops


class PeekCharm(ops.CharmBase):
    def __init__(self, framework):
        super().__init__(framework)
        hook = os.environ.get("JUJU_DISPATCH_PATH", "").rsplit("/", 1)[-1]
        units = sorted(u.name for r in self.model.relations["source"] for u in r.units)
        status = self.unit.status
        remote = os.environ.get("JUJU_REMOTE_UNIT", "-") or "-"
        with open("peek.log", "a") as f:
            f.write(f"{hook} {remote} units={','.join(units)} status={status.name}:{status.message}\n")


if __name__ == "__main__":
    ops.main(PeekCharm)
