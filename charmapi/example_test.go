package charmapi_test

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/fixpoint/fixpoint/charmapi"
)

// reconcile is a small reconcile hook of a database charm: it grants access
// to every client unit that asked for a database, and tells its peers who
// the primary is. Its output depends on the universe alone.
func reconcile(u *charmapi.Universe) (*charmapi.Result, error) {
	opts := u.Options()
	port := opts.Int("port", 5432)
	if err := opts.Err(); err != nil {
		return nil, err
	}
	res := charmapi.NewResult()
	for _, rel := range u.RelationsNamed("db") {
		bag := res.Local(rel.Ident).Set("host", u.Address).Setf("port", "%d", port)
		if asked := rel.MembersWith("database"); len(asked) > 0 {
			bag.Set("allowed-units", charmapi.JoinUnits(asked))
		}
	}
	if peers := u.Relation("cluster"); peers != nil && u.Leader {
		res.App(peers.Ident).Set("primary", u.Unit)
	}
	if u.Relation("db") == nil {
		return res.Blocked("needs a db relation"), nil
	}
	return res.Activef("serving on port %d", port), nil
}

// A reconcile hook is a Go function from universe to result; main is just
// charmapi.Main(reconcile). Here it is called directly on a hand-written
// universe, the way a unit test would.
func Example() {
	u := &charmapi.Universe{
		API:     charmapi.API,
		Unit:    "db/0",
		Service: "db",
		Leader:  true,
		Address: "10.0.0.1",
		Config:  map[string]any{"port": 6379.0}, // JSON numbers arrive as float64
		Relations: []charmapi.Relation{
			{Ident: "db:1", ID: 1, Name: "db", Role: "provides", RemoteService: "web",
				Units: map[string]map[string]string{
					"web/10": {"database": "shop"},
					"web/2":  {"database": "shop"},
					"web/3":  {}, // has not asked yet
				}},
			{Ident: "cluster:0", ID: 0, Name: "cluster", Role: "peer", RemoteService: "db",
				Units: map[string]map[string]string{"db/1": {}}},
		},
	}
	res, err := reconcile(u)
	if err != nil {
		fmt.Println(err)
		return
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(res)
	// Output:
	// {
	//   "relations": {
	//     "cluster:0": {
	//       "app": {
	//         "primary": "db/0"
	//       }
	//     },
	//     "db:1": {
	//       "local": {
	//         "allowed-units": "web/2 web/10",
	//         "host": "10.0.0.1",
	//         "port": "6379"
	//       }
	//     }
	//   },
	//   "status": {
	//     "state": "active",
	//     "message": "serving on port 6379"
	//   }
	// }
}

func ExampleUniverse_Options() {
	u := &charmapi.Universe{Config: map[string]any{
		"port":    8080.0,
		"debug":   true,
		"ratio":   0.5,
		"name":    42.0, // wrong type: reads as the default, reported by Err
		"comment": "hi",
	}}
	opts := u.Options()
	fmt.Println(opts.Int("port", 80), opts.Bool("debug", false), opts.Float("ratio", 1), opts.String("missing", "default"))
	fmt.Println(opts.String("name", "anonymous"))
	fmt.Println(opts.Err())
	// Output:
	// 8080 true 0.5 default
	// anonymous
	// config option "name" is 42 (float64); want a string
}

func ExampleRelation_Members() {
	rel := &charmapi.Relation{Units: map[string]map[string]string{
		"web/10": {"database": "shop"},
		"web/2":  {},
		"web/9":  {"database": "orders"},
	}}
	fmt.Println(rel.Members())
	fmt.Println(rel.MembersWith("database"))
	fmt.Println(rel.Get("web/9", "database"))

	// Accessors are nil-safe: a relation the unit is not in has no members.
	var none *charmapi.Relation
	fmt.Println(len(none.Members()), none.Get("web/0", "x") == "")
	// Output:
	// [web/2 web/9 web/10]
	// [web/9 web/10]
	// orders
	// 0 true
}

func ExampleJoinUnits() {
	fmt.Println(charmapi.JoinUnits([]string{"web/10", "web/2", "api/7"}))
	// Output: api/7 web/2 web/10
}

func ExampleResult_Raise() {
	res := charmapi.NewResult()
	res.Raise(charmapi.StatusActive, "ready")
	res.Raise(charmapi.StatusWaiting, "waiting for db access")
	res.Raise(charmapi.StatusActive, "ignored: less severe")
	res.Raise(charmapi.StatusBlocked, "needs a db relation")
	fmt.Println(res.Status)
	// Output: blocked: needs a db relation
}

func ExampleResult_Local() {
	res := charmapi.NewResult()
	res.Local("db:1").Set("database", "shop")
	res.LeaderSettings().Set("password-seed", "s3cret")
	res.OpenPort("8080/tcp", "443/tcp", "8080/tcp")
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
	// Output: {"relations":{"db:1":{"local":{"database":"shop"}}},"leader_data":{"password-seed":"s3cret"},"ports":["443/tcp","8080/tcp"]}
}
