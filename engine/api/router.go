package api

import "net/http"

// router is the server's mux, which also keeps the patterns registered:
// the authorization test asks every one of them, so that a route added
// later is asked too.
type router struct {
	*http.ServeMux
	patterns []string
}

func newRouter() *router { return &router{ServeMux: http.NewServeMux()} }

// Handle registers h for pattern.
func (m *router) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
}

// HandleFunc registers h for pattern.
func (m *router) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.HandleFunc(pattern, h)
}

// pattern is the registered pattern that serves r, "" when none does.
func (m *router) pattern(r *http.Request) string {
	_, p := m.ServeMux.Handler(r)
	return p
}
