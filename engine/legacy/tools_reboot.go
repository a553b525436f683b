package legacy

import (
	"context"
	"errors"
)

// juju-reboot [--now]: the unit asks for its machine to reboot. Here that
// restarts the lifecycle of every unit on the machine (the result's
// Reboot; each unit's next run has stop, then start): units run on the
// agent's host, whose own uptime does not move.

// errRebootInAction is Juju's refusal (worker/uniter/runner/context).
var errRebootInAction = errors.New("juju-reboot is not supported when running an action")

// reboot is what juju-reboot asked of a Run.
type reboot struct {
	// asked: the result carries Reboot.
	asked bool
	// now: the hook that asked was killed, and no later hook runs.
	now bool
	// kill cancels the running hook's context; nil between hooks.
	kill context.CancelFunc
}

// jujuReboot is `juju-reboot [--now]`: without --now the reboot follows
// the run; with it the hook is killed at once, as Juju kills it.
func jujuReboot(s *session, c *call) (any, error) {
	if err := checkEmpty(c.f.args); err != nil {
		return nil, err
	}
	if s.action != nil {
		return nil, errRebootInAction
	}
	s.writes.boot.asked = true
	if c.f.bool("now") {
		s.writes.boot.now = true
		if s.writes.boot.kill != nil {
			s.writes.boot.kill()
		}
	}
	return noOutput{}, nil
}
