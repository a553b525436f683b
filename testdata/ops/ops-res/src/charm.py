#!/usr/bin/python3
"""ops-res: reads the payload resource on install and upgrade-charm."""

import ops


class ResCharm(ops.CharmBase):
    def __init__(self, framework):
        super().__init__(framework)
        framework.observe(self.on.install, self._read)
        framework.observe(self.on.upgrade_charm, self._read)

    def _read(self, event):
        path = self.model.resources.fetch("payload")
        first = path.read_text().splitlines()[0]
        name = type(event).__name__
        with open("res.log", "a") as f:
            f.write(f"{name} {first} {path}\n")
        try:
            self.model.resources.fetch("extra")
        except ops.ModelError as e:
            with open("extra.err", "w") as f:
                f.write(str(e))
        self.unit.status = ops.ActiveStatus(f"payload {first}")


if __name__ == "__main__":
    ops.main(ResCharm)
