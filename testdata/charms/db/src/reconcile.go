package main

import (
	"crypto/sha256"
	"encoding/hex"
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
	opts := u.Options()
	port := opts.Int("port", 6379)
	secret := opts.String("secret", "fixpoint-demo")
	if err := opts.Err(); err != nil {
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
			charmapi.SortUnits(asked)
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
