#!/usr/bin/env python3
"""A test charm that keeps its data in Juju storage, through ops's model:
self.model.storages and the storage events' Storage (storage-list and
storage-get underneath)."""

import os
import pathlib

import ops


def log(line):
    with open("events.log", "a") as f:
        f.write(line + "\n")


class StoreCharm(ops.CharmBase):
    def __init__(self, framework):
        super().__init__(framework)
        framework.observe(self.on.data_storage_attached, self._attached)
        framework.observe(self.on.data_storage_detaching, self._detaching)
        for event in (self.on.install, self.on.start, self.on.stop, self.on.remove,
                      self.on.upgrade_charm, self.on.config_changed):
            framework.observe(event, self._other)
        framework.observe(self.on.where_action, self._where)

    def _data(self):
        (store,) = self.model.storages["data"]
        return store

    def _attached(self, event):
        s = event.storage
        log(f"data-storage-attached {s.full_id} {s.location}")
        # The model's view agrees with the event's.
        assert self._data().location == s.location, (self._data().location, s.location)
        assert str(s.location) == os.environ["JUJU_STORAGE_LOCATION"]

    def _detaching(self, event):
        s = event.storage
        data = (s.location / "install.txt").read_text().strip()
        log(f"data-storage-detaching {s.full_id} {data}")

    def _where(self, event):
        # An action has no JUJU_STORAGE_ID: ops finds the instance with
        # storage-list and its location with storage-get -s.
        store = self._data()
        event.set_results({"id": store.full_id, "location": str(store.location),
                           "install": (store.location / "install.txt").read_text().strip()})

    def _other(self, event):
        hook = os.environ.get("JUJU_DISPATCH_PATH", "").rsplit("/", 1)[-1]
        log(hook)
        if hook == "install":
            path = pathlib.Path(self._data().location) / "install.txt"
            path.write_text(f"written at install by {self.unit.name}\n")
        self.unit.status = ops.ActiveStatus(f"data at {self._data().location}")


if __name__ == "__main__":
    ops.main(StoreCharm)
