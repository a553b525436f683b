package model

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// ErrTakeover is why a registration of a machine that already holds a
// credential is refused: only that credential renews it.
var ErrTakeover = errors.New("machine is registered to another credential")

// ErrRequestReused is why a command is refused whose request id was
// already used for a different command.
var ErrRequestReused = errors.New("request id reused for a different command")

// registerMachine records a registration. A machine that holds a
// credential is renewed only by that credential (Renew): the join token
// registers a machine once, so a leaked one cannot take a machine over.
//
// It reports whether anything changed.
func (s *State) registerMachine(index uint64, m *RegisterMachine) (bool, error) {
	if noop, err := s.checkRegister(m); noop || err != nil {
		return false, err
	}
	cur, ok := s.Machines[m.Name]
	cred := m.Credential
	if cred == "" && ok {
		cred = cur.Credential
	}
	next := &Machine{Name: m.Name, Address: m.Address, Index: index, Credential: cred, Labels: maps.Clone(m.Labels)}
	if ok {
		next.Replaced, next.ID = cur.Replaced, cur.ID
	}
	if next.ID == "" && m.Number {
		next.ID = strconv.Itoa(s.NextMachine)
		s.NextMachine++
	}
	s.Machines[m.Name] = next
	return true, nil
}

// AgentCredentialFile is where an agent keeps its credential in its data
// dir (mode 0600), as Juju's agent.conf does.
const AgentCredentialFile = "agent.token"

// resetMachine drops a machine's credential, or the machine (Forget). The
// next agent registering it with the join token gets a new credential,
// and status shows at which index it replaced the old one.
func (s *State) resetMachine(index uint64, r *ResetMachine) error {
	if noop, err := s.checkReset(r); noop || err != nil {
		return err
	}
	m := s.Machines[r.Name]
	if r.Forget {
		delete(s.Machines, r.Name)
		return nil
	}
	s.Machines[r.Name] = &Machine{Name: m.Name, Address: m.Address, Index: index, Lost: m.Lost, Replaced: index, ID: m.ID, Labels: m.Labels}
	return nil
}

// setJoin replaces (or, with an empty hash, revokes) the join token.
func (s *State) setJoin(j *JoinToken) error {
	if noop, err := s.checkJoin(j); noop || err != nil {
		return err
	}
	s.Auth = &Auth{Operator: s.Auth.Operator, Join: j.Hash, JoinExpires: j.Expires}
	return nil
}

// CheckRequest tells whether c repeats a request already applied (dup,
// at its index), and refuses a remembered id sent with another command.
// The API asks it before proposing; the FSM asks it again.
func (s *State) CheckRequest(c *Command) (at uint64, dup bool, err error) {
	if c.RequestID == "" {
		return 0, false, nil
	}
	at, ok := s.Requests[c.RequestID]
	if !ok {
		return 0, false, nil
	}
	if d := s.RequestDigests[c.RequestID]; d != "" && d != c.Digest {
		return at, false, fmt.Errorf("request id %s: %w (applied at index %d); use a new id for a new command", Quote(c.RequestID, 40), ErrRequestReused, at)
	}
	return at, true, nil
}

// remember keeps c's request id (and digest), forgetting the oldest
// beyond requestMemory.
func (s *State) remember(c *Command, index uint64) {
	if c.RequestID == "" {
		return
	}
	s.Requests[c.RequestID] = index
	s.RequestLog = append(s.RequestLog, c.RequestID)
	if c.Digest != "" {
		if s.RequestDigests == nil {
			s.RequestDigests = map[string]string{}
		}
		s.RequestDigests[c.RequestID] = c.Digest
	}
	if len(s.RequestLog) > requestMemory {
		delete(s.Requests, s.RequestLog[0])
		delete(s.RequestDigests, s.RequestLog[0])
		s.RequestLog = s.RequestLog[1:]
	}
}

// NumberMachines gives each machine without a Juju id the next one, in
// name order, at index: the cluster's level has come to give machines
// their ids (LevelRecorded), and the machines registered before get
// theirs at that entry, alike on every server.
func (s *State) NumberMachines(index uint64) {
	for _, name := range slices.Sorted(maps.Keys(s.Machines)) {
		if s.Machines[name].ID != "" {
			continue
		}
		m := *s.Machines[name]
		m.ID, m.Index = strconv.Itoa(s.NextMachine), index
		s.NextMachine++
		s.Machines[name] = &m
	}
}
