package model

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Relation inference for `fixpoint relate` and `unrelate`, as Juju 3.x's
// integrate infers a missing endpoint (state.InferEndpoints): the
// candidates of each side are its charm's provides and requires plus the
// implicit juju-info provider (peers never); a pair fits when the
// interfaces are equal, one side provides and the other requires, and a
// container-scoped endpoint has a subordinate on one side. One fit is the
// relation; several are narrowed by dropping those that use an implicit
// endpoint, and still several are ambiguous, every candidate named.

// RelationEnds are the two endpoints of a relation, "svc:ep" each, in the
// order the operator named the services.
type RelationEnds [2]string

// String is the ends as Juju writes a relation: "a:x b:y".
func (r RelationEnds) String() string { return r[0] + " " + r[1] }

// ParseEndpointArg splits an argument "svc" or "svc:ep" as relate takes
// it; a colon at either end, or a second one, is invalid.
func ParseEndpointArg(arg string) (svc, ep string, err error) {
	svc, ep, hasEP := strings.Cut(arg, ":")
	if svc == "" || hasEP && ep == "" || strings.Contains(ep, ":") {
		return "", "", fmt.Errorf("invalid endpoint %q: write SERVICE or SERVICE:ENDPOINT", arg)
	}
	return svc, ep, nil
}

// InferRelation finds the relation between the endpoints a and b name
// ("svc" or "svc:ep"), whose services' charms metas holds by service
// name. The error says what did not fit and how to name it.
func InferRelation(a, b string, metas map[string]*CharmMeta) (RelationEnds, error) {
	sa, ea, err := ParseEndpointArg(a)
	if err != nil {
		return RelationEnds{}, err
	}
	sb, eb, err := ParseEndpointArg(b)
	if err != nil {
		return RelationEnds{}, err
	}
	for _, s := range []string{sa, sb} {
		if metas[s] == nil {
			return RelationEnds{}, fmt.Errorf("unknown service %q (services: %s)", s, listOr(sortedKeys(metas)))
		}
	}
	if sa == sb {
		return RelationEnds{}, fmt.Errorf("cannot relate service %s to itself: its units talk over its peer endpoints, which are related for it", sa)
	}
	ma, mb := metas[sa], metas[sb]
	candA, err := candidates(sa, ea, ma)
	if err != nil {
		return RelationEnds{}, err
	}
	candB, err := candidates(sb, eb, mb)
	if err != nil {
		return RelationEnds{}, err
	}
	var fits, explicit []RelationEnds
	for _, x := range candA {
		for _, y := range candB {
			if !endpointsFit(x, ma.Subordinate, y, mb.Subordinate) {
				continue
			}
			ends := RelationEnds{sa + ":" + x.Name, sb + ":" + y.Name}
			fits = append(fits, ends)
			if !implicitEndpoint(x) && !implicitEndpoint(y) {
				explicit = append(explicit, ends)
			}
		}
	}
	args := a + " " + b
	switch {
	case len(fits) == 1:
		return fits[0], nil
	case len(fits) == 0:
		return RelationEnds{}, fmt.Errorf("no relations found for %q: a relation joins an endpoint that provides an interface with one that requires it (container scope needs a subordinate on one side); %s has %s, and %s has %s",
			args, sa, describeEndpoints(candA), sb, describeEndpoints(candB))
	case len(explicit) == 1:
		return explicit[0], nil
	}
	quoted := make([]string, len(fits))
	for i, f := range fits {
		quoted[i] = strconv.Quote(f.String())
	}
	slices.Sort(quoted)
	return RelationEnds{}, fmt.Errorf("ambiguous relation: %q could refer to %s; name the endpoints, e.g. fixpoint relate %s", args, strings.Join(quoted, "; "), fits[0].String())
}

// endpointsFit is Juju's CanRelateTo with its container-scope check: the
// same interface, provider to requirer, and a container scope only where
// one of the two services is subordinate.
func endpointsFit(x EndpointSpec, subX bool, y EndpointSpec, subY bool) bool {
	if x.Interface != y.Interface || x.Role == Peer || y.Role == Peer || x.Role == y.Role {
		return false
	}
	if (x.Scope == Container || y.Scope == Container) && !subX && !subY {
		return false
	}
	return true
}

// implicitEndpoint is Juju's IsImplicit: the juju-info provider every
// charm has.
func implicitEndpoint(e EndpointSpec) bool {
	return e.Name == JujuInfo && e.Role == Provides && e.Interface == JujuInfo
}

// BoundRelation is a declared relation with its endpoints bound: its name
// in the environment and "svc:ep" each.
type BoundRelation struct {
	Name string
	Ends RelationEnds
}

// BoundRelations lists d's declared relations (peers left out), sorted by
// name, their endpoints in the order the environment wrote them.
func BoundRelations(env *Environment, d *Desired) []BoundRelation {
	var out []BoundRelation
	for _, r := range d.Relations {
		if r.Name == "" || len(r.Endpoints) != 2 {
			continue
		}
		ends := RelationEnds{r.Endpoints[0].String(), r.Endpoints[1].String()}
		if w := env.Relations[r.Name]; len(w) == 2 {
			if s, _, _ := strings.Cut(w[0], ":"); s != r.Endpoints[0].Service {
				ends[0], ends[1] = ends[1], ends[0]
			}
		}
		out = append(out, BoundRelation{Name: r.Name, Ends: ends})
	}
	slices.SortFunc(out, func(x, y BoundRelation) int { return strings.Compare(x.Name, y.Name) })
	return out
}

// FindRelation is the declared relation among rels the endpoints a and b
// ("svc" or "svc:ep") name, in either order: Juju's InferActiveRelation.
// None, or several, is an error naming what there is.
func FindRelation(a, b string, rels []BoundRelation) (BoundRelation, error) {
	sa, ea, err := ParseEndpointArg(a)
	if err != nil {
		return BoundRelation{}, err
	}
	sb, eb, err := ParseEndpointArg(b)
	if err != nil {
		return BoundRelation{}, err
	}
	var found []BoundRelation
	var ofA []string
	for _, r := range rels {
		if endMatches(r.Ends[0], sa, ea) && endMatches(r.Ends[1], sb, eb) || endMatches(r.Ends[1], sa, ea) && endMatches(r.Ends[0], sb, eb) {
			found = append(found, r)
		}
		if endMatches(r.Ends[0], sa, "") || endMatches(r.Ends[1], sa, "") {
			ofA = append(ofA, strconv.Quote(r.Ends.String()))
		}
	}
	args := a + " " + b
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return BoundRelation{}, fmt.Errorf("relation matching %q not found; the relations of %s are: %s", args, sa, listOr(ofA))
	}
	quoted := make([]string, len(found))
	for i, f := range found {
		quoted[i] = strconv.Quote(f.Ends.String())
	}
	slices.Sort(quoted)
	return BoundRelation{}, fmt.Errorf("ambiguous relation: %q could refer to %s; name the endpoints", args, strings.Join(quoted, "; "))
}

// endMatches says whether end ("svc:ep") is the endpoint svc[:ep] names.
func endMatches(end, svc, ep string) bool {
	s, e, _ := strings.Cut(end, ":")
	return s == svc && (ep == "" || e == ep)
}

// NameRelation names a relation "a-b" after its services, adding the
// endpoints, then a number, when that name is taken; every name is a
// valid relation name. It records the name in taken. It is how `import`
// names a bundle's relations and `relate` a new one.
func NameRelation(ends RelationEnds, taken map[string]bool) string {
	a, ea, _ := strings.Cut(ends[0], ":")
	b, eb, _ := strings.Cut(ends[1], ":")
	names := []string{a + "-" + b}
	if ea != "" || eb != "" {
		names = append(names, strings.Join(slices.DeleteFunc([]string{a, ea, b, eb}, func(s string) bool { return s == "" }), "-"))
	}
	for _, n := range names {
		if !taken[n] && CheckName(KindRelation, n) == nil {
			taken[n] = true
			return n
		}
	}
	base := names[0]
	if len(base) > MaxNameLen-4 {
		base = strings.TrimRight(base[:MaxNameLen-4], "-_")
	}
	for i := 2; ; i++ {
		n := base + "-" + strconv.Itoa(i)
		if !taken[n] {
			taken[n] = true
			return n
		}
	}
}
