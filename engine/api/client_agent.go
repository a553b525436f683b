package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/charm"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// AgentClient is what an agent asks of the control plane: it registers
// its machine, claims work, heartbeats, reports results and operations,
// ships its debug log and fetches charms and resources.
type AgentClient struct {
	*conn
	id *agentIdentity
}

// agentIdentity is what an agent's client registers with: the join token
// it started with, the machine credential it holds, and save, which keeps
// a new credential for the agent's next start.
type agentIdentity struct {
	mu               sync.Mutex
	join, credential string
	save             func(token string) error
	// labels are the machine's labels, sent with every registration.
	labels map[string]string
}

// UseCredential makes an agent's client present credential (may be "")
// when it registers, and hand every new credential to save, which keeps
// it for the agent's next start. The token given to NewClient is then
// the join token.
func (c *AgentClient) UseCredential(credential string, save func(token string) error) {
	token := c.tokenNow()
	c.id.mu.Lock()
	defer c.id.mu.Unlock()
	if c.id.join == "" {
		c.id.join = token
	}
	c.id.credential, c.id.save = credential, save
}

// SetLabels makes every registration carry the machine's labels
// (fixpoint agent --label), which replace those it had.
func (c *AgentClient) SetLabels(labels map[string]string) {
	c.id.mu.Lock()
	defer c.id.mu.Unlock()
	c.id.labels = maps.Clone(labels)
}

// Register records machine with its address and switches the client to
// the machine's new credential (agent).
//
// It presents the machine's credential when it holds one: only that renews
// a registered machine. When the control plane no longer knows the
// credential (the operator ran `fixpoint machine reset`), it registers
// with the join token and keeps the new credential through save.
func (c *AgentClient) Register(ctx context.Context, machine, address string) error {
	token := c.tokenNow()
	c.id.mu.Lock()
	if c.id.join == "" {
		c.id.join = token
	}
	cred, join, save, labels := c.id.credential, c.id.join, c.id.save, c.id.labels
	c.id.mu.Unlock()
	body := Register{Machine: machine, Address: address, Labels: labels}
	var reg Registered
	if cred != "" {
		c.setToken(cred)
		err := c.postJSON(ctx, "/v1/agent/register", body, &reg)
		if err == nil || !errors.Is(err, ErrUnauthorized) {
			return err
		}
	}
	c.setToken(join)
	if err := c.postJSON(ctx, "/v1/agent/register", body, &reg); err != nil {
		return err
	}
	c.id.mu.Lock()
	c.id.credential = reg.Token
	c.id.mu.Unlock()
	c.setToken(reg.Token)
	if save != nil {
		if err := save(reg.Token); err != nil {
			return fmt.Errorf("keep the credential of machine %s: %w (without it, a restarted agent needs `fixpoint machine reset %s`)", machine, err, machine)
		}
	}
	return nil
}

// Claim long-polls for machine's stale units (agent), of every
// environment: the poll says envs=1, since the agent keeps each
// environment's units in their own directories. Each unit's universe
// comes back decoded and, in UniverseJSON, as the bytes the server sent,
// which the agent passes to the hook without encoding them again.
func (c *AgentClient) Claim(ctx context.Context, machine string, max int, wait time.Duration) ([]wire.Work, error) {
	// The outer Universe field shadows the embedded one, so the first
	// pass only delimits each universe.
	var raw []struct {
		wire.Work
		Universe json.RawMessage `json:"universe"`
	}
	path := fmt.Sprintf("/v1/agent/work?machine=%s&max=%d&wait=%s&envs=1", url.QueryEscape(machine), max, wait)
	// The control plane answers by the wait; past it and the grace, the
	// answer is held on the way and the poll is asked again.
	pctx, cancel := context.WithTimeout(ctx, wait+pollGrace(wait))
	defer cancel()
	if _, err := c.do(pctx, http.MethodGet, path, nil, &raw); err != nil {
		if ctx.Err() == nil && errors.Is(pctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w (%s and %s): its answer is held on the way", ErrPollTimeout, wait, pollGrace(wait))
		}
		return nil, err
	}
	work := make([]wire.Work, len(raw))
	for i, w := range raw {
		work[i] = w.Work
		if len(w.Universe) == 0 || string(w.Universe) == "null" {
			return nil, fmt.Errorf("work for %s: unit %q came without its universe", machine, w.Unit)
		}
		var uni charmapi.Universe
		if err := json.Unmarshal(w.Universe, &uni); err != nil {
			return nil, fmt.Errorf("work for %s: universe of %s: %w", machine, w.Unit, err)
		}
		work[i].Universe, work[i].UniverseJSON = &uni, w.Universe
	}
	return work, nil
}

// Heartbeat tells the control plane machine's agent is alive and which
// units it is running (agent), by unit key (wire.UnitKey); it returns
// those of them that are no longer placed on the machine.
func (c *AgentClient) Heartbeat(ctx context.Context, machine string, running []string) ([]string, error) {
	if running == nil {
		running = []string{}
	}
	var reply HeartbeatReply
	err := c.postJSON(ctx, "/v1/agent/heartbeat?machine="+url.QueryEscape(machine), Heartbeat{Running: running}, &reply)
	return reply.Gone, err
}

// Released asks which of the units whose storage machine's agent keeps
// (kept, by unit key) the control plane no longer places on the machine,
// answered from the latest committed state (agent).
func (c *AgentClient) Released(ctx context.Context, machine string, kept []string) ([]string, error) {
	var reply HeartbeatReply
	err := c.postJSON(ctx, "/v1/agent/heartbeat?machine="+url.QueryEscape(machine), Heartbeat{Kept: kept}, &reply)
	return reply.Released, err
}

// EnvsGone asks which of the environments whose directories machine's
// agent keeps (envs) the cluster no longer holds, answered from the
// latest committed state (agent).
func (c *AgentClient) EnvsGone(ctx context.Context, machine string, envs []string) ([]string, error) {
	var reply HeartbeatReply
	err := c.postJSON(ctx, "/v1/agent/heartbeat?machine="+url.QueryEscape(machine), Heartbeat{Envs: envs}, &reply)
	return reply.GoneEnvs, err
}

// Report posts finished runs (agent).
func (c *AgentClient) Report(ctx context.Context, machine string, reports []wire.Report) error {
	return c.postJSON(ctx, "/v1/agent/results?machine="+url.QueryEscape(machine), reports, nil)
}

// FetchCharm downloads a charm archive and unpacks it into dir, checking
// its content hash (agent).
func (c *AgentClient) FetchCharm(ctx context.Context, hash, dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(dir), ".fetch-*.tar")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, err = c.do(ctx, http.MethodGet, "/v1/charms/"+hash, nil, &limitWriter{w: f, n: charm.MaxSize})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return charm.Unpack(f.Name(), hash, dir)
}

// FetchResource downloads the resource file of digest to path, checking
// its size and digest; nothing is left at path otherwise (agent).
func (c *AgentClient) FetchResource(ctx context.Context, digest, path string) error {
	if !validHash(digest) {
		return fmt.Errorf("%s is not a sha256 digest", model.Quote(digest, 72))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".fetch-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	h := sha256.New()
	_, err = c.do(ctx, http.MethodGet, "/v1/resources/"+digest, nil, &limitWriter{w: hashWriter{f, h}, n: model.MaxResourceSize})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != digest {
		return fmt.Errorf("resource %s arrived with digest %s", model.ShortHash(digest), model.ShortHash(got))
	}
	return os.Rename(f.Name(), path)
}

// StartAction tells the control plane machine's agent takes operation
// id of environment env ("" the default one) (agent); an error says not
// to run it.
func (c *AgentClient) StartAction(ctx context.Context, machine, env string, id int) error {
	return c.postJSON(ctx, "/v1/agent/actions/start?machine="+url.QueryEscape(machine), StartReq{ID: id, Env: env}, nil)
}

// FinishAction reports what an operation came to (agent); rep.Env names
// its environment.
func (c *AgentClient) FinishAction(ctx context.Context, machine string, rep *wire.ActionReport) error {
	return c.postJSON(ctx, "/v1/agent/actions/finish?machine="+url.QueryEscape(machine), rep, nil)
}

// ShipLogs posts a batch of the machine's log lines (agent), saying how
// many, so that the node holds it until the whole batch fits its budget.
func (c *AgentClient) ShipLogs(ctx context.Context, machine string, lines []model.LogLine) error {
	path := fmt.Sprintf("/v1/agent/logs?machine=%s&lines=%d", url.QueryEscape(machine), max(len(lines), 1))
	return c.postJSON(ctx, path, model.LogBatch{Lines: lines}, nil)
}

// hashWriter writes to a file and a hash at once.
type hashWriter struct {
	f *os.File
	h interface{ Write([]byte) (int, error) }
}

func (w hashWriter) Write(p []byte) (int, error) {
	w.h.Write(p)
	return w.f.Write(p)
}
