package api

import "net/http"

// router is the server's mux, which also keeps the patterns registered:
// the authorization test asks every one of them, so that a route added
// later is asked too. An environment-scoped pattern (envRoutes) is also
// registered under the environment prefix (envroute.go), behind inEnv.
type router struct {
	*http.ServeMux
	patterns []string
	// inEnv wraps the handler of a prefixed pattern; nil registers none.
	inEnv func(http.Handler) http.Handler
}

func newRouter() *router { return &router{ServeMux: http.NewServeMux()} }

// Handle registers h for pattern, and for its prefixed pattern when it
// is environment-scoped.
func (m *router) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
	if envRoutes[pattern] && m.inEnv != nil {
		p := prefixed(pattern)
		m.patterns = append(m.patterns, p)
		m.ServeMux.Handle(p, m.inEnv(h))
	}
}

// HandleFunc registers h for pattern (Handle).
func (m *router) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(h))
}

// pattern is the registered pattern that serves r, "" when none does.
func (m *router) pattern(r *http.Request) string {
	_, p := m.ServeMux.Handler(r)
	return p
}
