package model

import (
	"reflect"
	"slices"
	"testing"
)

// TestCloneSharesNothingMutable pins the fields Clone knows about. A new
// field of these types must be sorted into Clone: copied if the model
// edits it in place, shared only if it is ever replaced whole. Then add
// it here.
func TestCloneSharesNothingMutable(t *testing.T) {
	for typ, known := range map[reflect.Type][]string{
		reflect.TypeFor[State](): {"Index", "EnvIndex", "Name", "Charms", "Services", "Units", "Relations", "Machines", "Secrets",
			"NextRelation", "UnitNumbers", "NextStorage", "Credential", "Placement", "NextMachine", "UpdateStatus", "Document", "Auth", "Limits", "Requests", "RequestLog", "RequestDigests", "Actions", "ActiveActions", "NextAction", "sealer", "idx"},
		reflect.TypeFor[Unit](): {"Name", "Service", "Machine", "Life", "Principal", "Settings", "Status", "State", "Ports",
			"Storage", "Reconciled", "Seen", "Reconciles", "Wave", "WaveOutputs", "Churn", "Error", "Resolved", "Created", "Index"},
		reflect.TypeFor[Service](): {"Name", "Charm", "Config", "ConfigRev", "Units", "Placement", "Life", "NextUnit",
			"Leader", "LeaderRev", "LeaderData", "CharmRev", "Index", "Subordinate", "Resources", "Storage", "Trust", "Exposed"},
		reflect.TypeFor[Relation]():  {"ID", "Key", "Endpoints", "Interface", "Scope", "Life", "App", "Departed", "Index"},
		reflect.TypeFor[Machine]():   {"Name", "Address", "Index", "Lost", "Credential", "Replaced", "ID", "Labels", "Boots"},
		reflect.TypeFor[UnitError](): {"Hash", "Message", "Kind", "Attempts", "RetryAt", "Seen", "Timer"},
		reflect.TypeFor[Resolved]():  {"NoRetry", "Index"},
	} {
		var got []string
		for i := 0; i < typ.NumField(); i++ {
			got = append(got, typ.Field(i).Name)
		}
		if !slices.Equal(got, known) {
			t.Errorf("%s has fields %v; Clone was written for %v", typ, got, known)
		}
	}
}
