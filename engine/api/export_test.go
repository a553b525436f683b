package api

// Patterns lists the route patterns s registered, for the test that asks
// every route with every kind of credential.
func Patterns(s *Server) []string { return append([]string(nil), s.mux.patterns...) }
