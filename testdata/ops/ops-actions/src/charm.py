#!/usr/bin/python3
"""ops-actions: an ops charm whose actions read params, log, set nested
results, write a status and peer data, and fail on request."""

import ops


class ActionsCharm(ops.CharmBase):
    def __init__(self, framework):
        super().__init__(framework)
        framework.observe(self.on.install, self._on_install)
        framework.observe(self.on.greet_action, self._on_greet)
        framework.observe(self.on.noop_action, self._on_noop)

    def _on_install(self, event):
        self.unit.status = ops.ActiveStatus("ready")

    def _on_greet(self, event):
        name = event.params["name"]
        opts = event.params["options"]
        text = f"hello {name}" + ("!" if opts["loud"] else "")
        event.log(f"greeting {name} {opts['times']} times")
        if event.params["fail"]:
            event.fail(event.params["fail"])
            return
        self.unit.status = ops.ActiveStatus(text)
        peers = self.model.get_relation("cluster")
        if peers is not None:
            peers.data[self.unit]["greeted"] = name
        event.set_results({"greeting": {"text": text, "times": opts["times"]}, "action-id": event.id})

    def _on_noop(self, event):
        pass


if __name__ == "__main__":
    ops.main(ActionsCharm)
