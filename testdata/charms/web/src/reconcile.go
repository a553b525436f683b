package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/fixpoint/fixpoint/charmapi"
)

// confFile is written in the unit's own directory (the hook's working
// directory) once the unit has been granted access to a database.
const confFile = "web.conf"

// reconcile computes the web unit's whole output from its universe.
//
// Over every "db" relation the unit asks for the configured database
// (database=<name> in its own settings) and waits until a db unit lists it
// in allowed-units (seed 004): only then does it write web.conf with the
// credentials that db unit published and report active. Of several db units
// that list it, the one with the lowest unit number is used, so the choice
// depends on the universe alone.
//
// Over the "cluster" peer relation it publishes its address and port.
func reconcile(u *charmapi.Universe) (*charmapi.Result, error) {
	opts := u.Options()
	database := opts.String("database", "shop")
	port := opts.Int("port", 8080)
	if err := opts.Err(); err != nil {
		return nil, err
	}
	res := charmapi.NewResult()

	if peer := u.Relation("cluster"); peer != nil {
		res.SetLocal(peer.Ident, map[string]string{
			"address": address(u),
			"port":    strconv.Itoa(port),
		})
	}

	rels := u.RelationsNamed("db")
	sort.Slice(rels, func(i, j int) bool { return rels[i].ID < rels[j].ID })
	var g *grant
	for _, rel := range rels {
		res.SetLocal(rel.Ident, map[string]string{"database": database})
		if g == nil {
			g = findGrant(u.Unit, rel)
		}
	}

	switch {
	case database == "":
		if err := removeConf(); err != nil {
			return nil, err
		}
		res.Blocked(`config option "database" is empty: set it to the database to ask for`)
	case len(rels) == 0:
		if err := removeConf(); err != nil {
			return nil, err
		}
		res.Blocked("needs a db relation")
	case g == nil:
		if err := removeConf(); err != nil {
			return nil, err
		}
		res.Waiting("waiting for db access")
	default:
		if err := writeConf(g.conf(u.Unit)); err != nil {
			return nil, err
		}
		res.Active(fmt.Sprintf("connected to %s:%s db %s as %s", g.host, g.port, g.database, g.user))
	}
	return res, nil
}

// grant is what a db unit published for us.
type grant struct {
	unit, host, port, user, password, database string
}

func (g *grant) conf(unit string) string {
	return fmt.Sprintf("# written by the web charm for %s; granted by %s\nhost=%s\nport=%s\ndatabase=%s\nuser=%s\npassword=%s\n",
		unit, g.unit, g.host, g.port, g.database, g.user, g.password)
}

// findGrant returns the grant of the lowest-numbered remote unit that lists
// unit in its allowed-units and has published complete credentials.
func findGrant(unit string, rel *charmapi.Relation) *grant {
	names := make([]string, 0, len(rel.Units))
	for name := range rel.Units {
		names = append(names, name)
	}
	charmapi.SortUnits(names)
	for _, name := range names {
		s := rel.Units[name]
		listed := false
		for _, a := range strings.Fields(s["allowed-units"]) {
			if a == unit {
				listed = true
				break
			}
		}
		g := &grant{name, s["host"], s["port"], s["user"], s["password"], s["database"]}
		if listed && g.host != "" && g.port != "" && g.user != "" && g.password != "" && g.database != "" {
			return g
		}
	}
	return nil
}

// writeConf writes web.conf when its content differs, atomically.
func writeConf(content string) error {
	if old, err := os.ReadFile(confFile); err == nil && string(old) == content {
		return nil
	}
	tmp := confFile + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", confFile, err)
	}
	if err := os.Rename(tmp, confFile); err != nil {
		return fmt.Errorf("write %s: %w", confFile, err)
	}
	return nil
}

// removeConf removes web.conf: without access there is nothing to connect to.
func removeConf() error {
	if err := os.Remove(confFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", confFile, err)
	}
	return nil
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
