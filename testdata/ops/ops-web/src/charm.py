#!/usr/bin/python3
"""ops-web: requires db. Writes web.conf from the db service's password
and port (application data) and its units' hosts; blocks without a db
relation. The leader names itself in the peer application data. A
departed db unit's host, read in its departed hook, goes to
departed.log."""

import os

import ops

from common import count, log_event


class WebCharm(ops.CharmBase):
    _stored = ops.StoredState()

    def __init__(self, framework):
        super().__init__(framework)
        self._stored.set_default(counts={})
        log_event()
        for event in (
            self.on.install, self.on.start, self.on.upgrade_charm, self.on.config_changed,
            self.on.leader_elected, self.on.leader_settings_changed, self.on.update_status,
            self.on.db_relation_created, self.on.db_relation_joined, self.on.db_relation_changed,
            self.on.db_relation_departed, self.on.db_relation_broken,
            self.on.cluster_relation_joined, self.on.cluster_relation_changed,
            self.on.cluster_relation_departed,
        ):
            framework.observe(event, self._reconcile)
        framework.observe(self.on.db_relation_departed, self._on_db_departed)

    def _on_db_departed(self, event):
        # Juju keeps the departing unit's settings readable in this hook.
        host = event.relation.data[event.departing_unit].get("host", "")
        with open("departed.log", "a") as f:
            f.write(f"{event.departing_unit.name} host={host}\n")

    def _reconcile(self, event):
        count(self._stored, type(event).__name__)
        peers = self.model.get_relation("cluster")
        if peers is not None and self.unit.is_leader():
            peers.data[self.app]["leader"] = self.unit.name
        relation = self.model.get_relation("db")
        if isinstance(event, ops.RelationBrokenEvent):
            relation = None
        app_data = relation.data[relation.app] if relation is not None and relation.app else {}
        if relation is None or "password" not in app_data:
            if os.path.exists("web.conf"):
                os.remove("web.conf")
            self.unit.status = ops.BlockedStatus("needs a db relation")
            return
        hosts = sorted(relation.data[u].get("host", "") for u in relation.units)
        with open("web.conf", "w") as f:
            f.write(f"{self.config['greeting']}\n")
            f.write(f"hosts={','.join(hosts)}\nport={app_data['port']}\npassword={app_data['password']}\n")
        self.unit.status = ops.ActiveStatus(f"connected to {len(hosts)} db units")


if __name__ == "__main__":
    ops.main(WebCharm)
