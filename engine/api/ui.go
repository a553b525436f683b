package api

import (
	"embed"
	"io/fs"
	"net/http"
	"sort"
	"strconv"

	"github.com/fixpoint/fixpoint/model"
)

// uiFiles is the web dashboard: plain HTML, CSS and JavaScript, no build
// step. It reads the same API as the command line.
//
//go:embed ui
var uiFiles embed.FS

// uiRoutes mounts the dashboard's static page, which asks for a token
// before it reads anything.
func uiRoutes(mux *router) {
	sub, _ := fs.Sub(uiFiles, "ui")
	files := http.StripPrefix("/ui/", http.FileServerFS(sub))
	mux.Handle("GET /ui/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The dashboard changes with the binary; never serve a stale one.
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	}))
	mux.Handle("GET /ui", http.RedirectHandler("/ui/", http.StatusFound))
}

// RelationInfo is one relation as GET /v1/relations lists it: the lines
// of the dashboard's graph.
type RelationInfo struct {
	ID        int                 `json:"id"`
	Key       string              `json:"key"`
	Interface string              `json:"interface"`
	Scope     string              `json:"scope"`
	Life      string              `json:"life"`
	Endpoints []model.RelEndpoint `json:"endpoints"`
}

// relations serves GET /v1/relations, blocking like status with
// ?index=&wait=.
func (s *statusAPI) relations(w http.ResponseWriter, r *http.Request) {
	s, ok := s.in(w, r)
	if !ok {
		return
	}
	if !s.gate.read(w, r) {
		return
	}
	out := []RelationInfo{}
	_ = s.node.View(func(st *model.State) error {
		w.Header().Set("X-Fixpoint-Index", strconv.FormatUint(st.Index, 10))
		for _, rel := range st.Relations {
			out = append(out, RelationInfo{ID: rel.ID, Key: string(rel.Key), Interface: rel.Interface, Scope: string(rel.Scope), Life: string(rel.Life), Endpoints: rel.Endpoints})
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	writeJSON(w, http.StatusOK, out)
}
