#!/usr/bin/python3
"""ops-db: provides db. The leader makes up the password once, at random,
keeps it in the peer relation's application data (leader-only), and
publishes it with the port to every client; every unit publishes its
host from network-get and opens the port."""

import secrets

import ops

from common import count, log_event


class DbCharm(ops.CharmBase):
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

    def _password(self):
        peers = self.model.get_relation("cluster")
        if peers is None:
            return None
        password = peers.data[self.app].get("password")
        if password is None and self.unit.is_leader():
            # A random secret, made once by the leader and read back ever
            # after: not a function of the universe, yet stable.
            password = secrets.token_hex(8)
            peers.data[self.app]["password"] = password
        return password

    def _reconcile(self, event):
        name = type(event).__name__
        count(self._stored, name)
        port = int(self.config["port"])
        self.unit.set_ports(port)
        self.unit.set_workload_version("1.0")
        password = self._password()
        clients = 0
        for relation in self.model.relations["db"]:
            if isinstance(event, ops.RelationBrokenEvent) and event.relation.id == relation.id:
                continue
            address = self.model.get_binding(relation).network.ingress_address
            relation.data[self.unit]["host"] = str(address)
            clients += len(relation.units)
            if self.unit.is_leader() and password:
                relation.data[self.app].update({"password": password, "port": str(port)})
        if self.unit.is_leader():
            self.app.status = ops.ActiveStatus("db ready")
        self.unit.status = ops.ActiveStatus(f"serving {clients} clients")


if __name__ == "__main__":
    ops.main(DbCharm)
