package engine

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fixpoint/fixpoint/model"
)

// Phases of a unit.
const (
	Pending     = "pending"
	Reconciling = "reconciling"
	Settled     = "settled"
	Error       = "error"
)

// Status is the environment as `fixpoint status` shows it.
type Status struct {
	Index       uint64                    `json:"index"`
	Environment string                    `json:"environment,omitempty"`
	Converged   bool                      `json:"converged"`
	Summary     string                    `json:"summary"`
	Services    map[string]*ServiceStatus `json:"services"`
	Units       map[string]*UnitStatus    `json:"units"`
	Machines    map[string]*MachineStatus `json:"machines"`
}

// ServiceStatus is one service's line in status.
type ServiceStatus struct {
	Charm  string `json:"charm"`
	Life   string `json:"life"`
	Units  int    `json:"units"`
	Leader string `json:"leader,omitempty"`
}

// UnitStatus is one unit's line in status.
type UnitStatus struct {
	Service    string       `json:"service"`
	Machine    string       `json:"machine,omitempty"`
	Life       string       `json:"life"`
	Phase      string       `json:"phase"`
	Status     model.Status `json:"status"`
	Leader     bool         `json:"leader"`
	Reconciles int          `json:"reconciles"`
	Error      string       `json:"error,omitempty"`
	// Reason says why a pending unit is not running yet.
	Reason string   `json:"reason,omitempty"`
	Ports  []string `json:"ports,omitempty"`
	// Agent is "lost" when the unit's machine agent stopped answering:
	// the unit keeps its relations but cannot run until it is back.
	Agent string `json:"agent,omitempty"`
}

// MachineStatus is one machine's line in status.
type MachineStatus struct {
	Address string `json:"address"`
	State   string `json:"state"`
	// CredentialReplaced is the index at which the operator reset the
	// machine's agent credential, or 0: whichever agent registered since
	// holds a new one.
	CredentialReplaced uint64 `json:"credential_replaced,omitempty"`
}

// Status reports every unit's phase at the controller's index.
func (c *Controller) Status() (*Status, error) {
	var out *Status
	err := c.store.View(func(st *model.State) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.refreshLocked(st)
		out = c.statusLocked(st)
		return nil
	})
	return out, err
}

func (c *Controller) statusLocked(st *model.State) *Status {
	now := c.opts.Now()
	s := &Status{
		Index:       st.Index,
		Environment: st.Name,
		Services:    map[string]*ServiceStatus{},
		Units:       map[string]*UnitStatus{},
		Machines:    map[string]*MachineStatus{},
	}
	for name, svc := range st.Services {
		s.Services[name] = &ServiceStatus{Charm: svc.Charm, Life: string(svc.Life), Units: svc.Units, Leader: svc.Leader}
	}
	for name, m := range st.Machines {
		state := "started"
		if m.Lost {
			state = "lost"
		}
		s.Machines[name] = &MachineStatus{Address: m.Address, State: state, CredentialReplaced: m.Replaced}
	}
	counts := map[string]int{}
	for name, u := range st.Units {
		us := &UnitStatus{
			Service:    u.Service,
			Machine:    u.Machine,
			Life:       string(u.Life),
			Status:     u.Status,
			Leader:     st.Services[u.Service] != nil && st.Services[u.Service].Leader == name,
			Reconciles: u.Reconciles,
			Ports:      u.Ports,
		}
		v := c.views[name]
		cl := c.claims[name]
		switch {
		case cl != nil && now.Before(cl.until):
			us.Phase = Reconciling
		case u.Error != nil && u.Resolved == nil:
			us.Phase = Error
			us.Error = u.Error.Message
			if u.Error.Kind == model.ErrHook && u.Error.RetryAt > 0 {
				us.Reason = fmt.Sprintf("attempt %d failed; retrying in %s", u.Error.Attempts, time.Until(time.Unix(0, u.Error.RetryAt)).Round(time.Second))
			}
		case u.Error != nil:
			us.Phase = Pending
			us.Reason = "resolved: retrying"
		case v == nil || c.outdated[name] == viewHashUnknown || v.hash != u.Reconciled:
			us.Phase = Pending
			switch {
			case u.Machine == "":
				us.Reason = "no machine"
			case v != nil && !v.member:
				us.Reason = fmt.Sprintf("waiting for machine %s to register", u.Machine)
			}
		default:
			us.Phase = Settled
		}
		s.Units[name] = us
		if m := st.Machines[u.Machine]; m != nil && m.Lost {
			// Nothing can run there until the agent is back; the rest
			// of the environment can still reach its fixed point.
			us.Agent = "lost"
			us.Status = model.Status{State: "unknown", Message: "agent lost; " + us.Status.Message}
			counts["lost"]++
			continue
		}
		counts[us.Phase]++
	}
	total := len(st.Units)
	s.Converged = counts[Pending] == 0 && counts[Reconciling] == 0 && counts[Error] == 0
	if s.Converged {
		s.Summary = fmt.Sprintf("converged at index %d", st.Index)
		if n := counts["lost"]; n > 0 {
			s.Summary += fmt.Sprintf(" (%d units on lost machines wait for their agent)", n)
		}
	} else {
		var parts []string
		if n := counts[Pending] + counts[Reconciling]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d of %d units pending", n, total))
		}
		if n := counts[Error]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d error", n))
		}
		s.Summary = strings.Join(parts, ", ")
	}
	return s
}

// FirstError returns the first unit in error, by name, and its message.
func (s *Status) FirstError() (string, string) {
	var names []string
	for n, u := range s.Units {
		if u.Phase == Error {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "", ""
	}
	sort.Slice(names, func(i, j int) bool { return model.UnitLess(names[i], names[j]) })
	return names[0], s.Units[names[0]].Error
}
