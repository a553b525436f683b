package engine

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// DecodeResult parses and checks a hook's stdout against the universe it
// was given, and translates relation idents to ids. The rules for each
// field are model's (CheckPort, CheckStatus, CheckSettings), the same the
// #Result schema's Go check and the FSM apply; field paths are written
// as the schema writes them ("ports.0").
func DecodeResult(uni *charmapi.Universe, out []byte) (*model.Result, error) {
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		out = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	var res charmapi.Result
	if err := dec.Decode(&res); err != nil {
		return nil, badResult("stdout is not a result object: %v (output begins %q)", err, head(out, 80))
	}
	if dec.More() {
		return nil, badResult("stdout holds more than one JSON value; print exactly one result object")
	}
	mr := &model.Result{Unit: uni.Unit, Leader: uni.Leader}
	idents := map[string]*charmapi.Relation{}
	var known []string
	for i := range uni.Relations {
		idents[uni.Relations[i].Ident] = &uni.Relations[i]
		known = append(known, uni.Relations[i].Ident)
	}
	for _, ident := range slices.Sorted(maps.Keys(res.Relations)) {
		rr := res.Relations[ident]
		rel, ok := idents[ident]
		if !ok {
			return nil, badResult("relations.%s: %s is not in relation %q (its relations: %s)", ident, uni.Unit, ident, orNone(known))
		}
		if rr.Local != nil {
			if err := checkBag("relations."+ident+".local", rr.Local); err != nil {
				return nil, err
			}
			if mr.Settings == nil {
				mr.Settings = map[int]map[string]string{}
			}
			mr.Settings[rel.ID] = rr.Local
		}
		if rr.App != nil {
			if !uni.Leader {
				return nil, badResult("relations.%s.app: %s is not the leader of %s; only the leader writes the application bag", ident, uni.Unit, uni.Service)
			}
			if err := checkBag("relations."+ident+".app", rr.App); err != nil {
				return nil, err
			}
			if mr.App == nil {
				mr.App = map[int]map[string]string{}
			}
			mr.App[rel.ID] = rr.App
		}
	}
	if res.LeaderData != nil {
		if !uni.Leader {
			return nil, badResult("leader_data: %s is not the leader of %s; only the leader writes leader data", uni.Unit, uni.Service)
		}
		if err := checkBag("leader_data", res.LeaderData); err != nil {
			return nil, err
		}
		mr.LeaderData = res.LeaderData
	}
	if res.Status != nil {
		if field, err := model.CheckStatus(res.Status.State, res.Status.Message); err != nil {
			return nil, badResult("status.%s: %v", field, err)
		}
		mr.Status = &model.Status{State: res.Status.State, Message: res.Status.Message}
	}
	if res.State != nil {
		if err := checkBag("state", res.State); err != nil {
			return nil, err
		}
		mr.State = res.State
	}
	if i, err := model.CheckPorts(res.Ports); err != nil {
		if i < 0 {
			return nil, badResult("ports: %v", err)
		}
		return nil, badResult("ports.%d: %v", i, err)
	}
	if res.Ports != nil {
		mr.Ports = append([]string{}, res.Ports...)
		sort.Strings(mr.Ports)
	}
	if err := model.CheckStorageAdd(res.StorageAdd); err != nil {
		return nil, badResult("%v", err)
	}
	mr.StorageAdd = res.StorageAdd
	mr.Reboot = res.Reboot
	mr.Output = digest(&res)
	if len(res.Secrets) > 0 {
		cs, err := decodeSecrets(uni, res.Secrets)
		if err != nil {
			return nil, err
		}
		mr.Secrets = cs
	}
	mr.Output = digest(withoutSecretValues(&res))
	return mr, nil
}

func checkBag(field string, m map[string]string) error {
	if k, err := model.CheckSettings(m); err != nil {
		if k != "" {
			return badResult("%s.%s: %v", field, k, err)
		}
		return badResult("%s: %v", field, err)
	}
	return nil
}

func head(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}
