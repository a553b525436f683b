package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/fixpoint/fixpoint/charmapi"
)

// reconcile computes the db unit's whole output from its universe.
//
// Over every "db" relation it grants access to the remote units that asked
// for it (seed 004's allowed-units protocol): a client unit sets
// database=<name> in its own settings, and this unit answers with
// host, port, user, password, database and allowed-units. Units that have
// not asked are not listed, so a client never connects before it is
// allowed to. Everything is derived from the universe alone (the password
// is a hash of the secret, never random), so running the hook again on the
// same universe returns the same result and the fixed point is stable.
//
// Over the "cluster" peer relation each unit publishes its address, and the
// leader names itself primary in the service's bag.
func reconcile(u *charmapi.Universe) (*charmapi.Result, error) {
	port, err := intOption(u.Config, "port", 6379)
	if err != nil {
		return nil, err
	}
	secret, err := stringOption(u.Config, "secret", "fixpoint-demo")
	if err != nil {
		return nil, err
	}
	host := address(u)
	res := charmapi.NewResult()

	clients := map[string]bool{}
	for _, rel := range u.RelationsNamed("db") {
		// host and port are always published, so the bag is never empty
		// and a grant is withdrawn when its last client leaves.
		settings := map[string]string{"host": host, "port": strconv.Itoa(port)}
		var asked []string
		database := ""
		for unit, s := range rel.Units {
			name := s["database"]
			if name == "" {
				continue
			}
			asked = append(asked, unit)
			if database == "" || name < database {
				database = name
			}
		}
		if len(asked) > 0 {
			sortUnits(asked)
			user := rel.RemoteService
			if user == "" {
				user, _, _ = strings.Cut(asked[0], "/")
			}
			settings["user"] = user
			settings["password"] = password(secret, user)
			settings["database"] = database
			settings["allowed-units"] = strings.Join(asked, " ")
			for _, unit := range asked {
				clients[unit] = true
			}
		}
		res.SetLocal(rel.Ident, settings)
	}

	primary := ""
	peer := u.Relation("cluster")
	if peer != nil {
		res.SetLocal(peer.Ident, map[string]string{"address": host})
		if u.Leader {
			res.SetApp(peer.Ident, map[string]string{"primary": u.Unit})
		}
		primary = peer.App["primary"]
	}
	if u.Leader {
		primary = u.Unit
	}

	n := plural(len(clients), "client")
	switch {
	case u.Leader:
		res.Active("primary, " + n)
	case primary != "":
		res.Active("replica of " + primary + ", " + n)
	default:
		res.Waiting("waiting for a primary, " + n)
	}
	return res, nil
}

// password derives a client's password from the secret and the client
// service: the same inputs always give the same password.
func password(secret, service string) string {
	sum := sha256.Sum256([]byte(secret + "/" + service))
	return hex.EncodeToString(sum[:])[:16]
}

// address is the unit's own address as others reach it.
func address(u *charmapi.Universe) string {
	if u.Address != "" {
		return u.Address
	}
	for _, r := range u.Relations {
		if a := r.Local["private-address"]; a != "" {
			return a
		}
	}
	return "127.0.0.1"
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// sortUnits sorts unit names by service, then by unit number, so that
// db/2 comes before db/10.
func sortUnits(units []string) {
	sort.Slice(units, func(i, j int) bool {
		si, ni := splitUnit(units[i])
		sj, nj := splitUnit(units[j])
		if si != sj {
			return si < sj
		}
		if ni != nj {
			return ni < nj
		}
		return units[i] < units[j]
	})
}

func splitUnit(name string) (string, int) {
	svc, num, ok := strings.Cut(name, "/")
	if !ok {
		return name, -1
	}
	n, err := strconv.Atoi(num)
	if err != nil {
		return svc, -1
	}
	return svc, n
}

func intOption(cfg map[string]any, name string, def int) (int, error) {
	v, ok := cfg[name]
	if !ok || v == nil {
		return def, nil
	}
	switch n := v.(type) {
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int(n), nil
		}
	case int:
		return n, nil
	case int64:
		return int(n), nil
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return int(i), nil
		}
	case string:
		if i, err := strconv.Atoi(n); err == nil {
			return i, nil
		}
	}
	return 0, fmt.Errorf("config option %q is %v (%T); want an int", name, v, v)
}

func stringOption(cfg map[string]any, name, def string) (string, error) {
	v, ok := cfg[name]
	if !ok || v == nil {
		return def, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("config option %q is %v (%T); want a string", name, v, v)
	}
	return s, nil
}
