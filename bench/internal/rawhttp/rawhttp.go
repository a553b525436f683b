// Package rawhttp is the benches' HTTP/1.1 client: one keep-alive
// connection, each request written in one piece and each answer read
// with net/http's parser, without net/http's client. Through that
// client every answer passed through the connection's read-loop
// goroutine before the caller's, with a context and a timer per request:
// on a box the benches share with the servers, that CPU and those
// hand-offs were the bench's, measured as the server's.
package rawhttp

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Conn is one client connection to host, dialled on first use and again
// after an error. It is not safe for concurrent use.
type Conn struct {
	// Host is the server's host:port.
	Host string
	// Token is sent as the bearer credential of every request.
	Token string
	// Timeout bounds each request when set; 0 leaves a request (a long
	// poll) to ctx, which closes the connection when it ends.
	Timeout time.Duration
	// Kernel, set before the first Do, has the kernel stamp when each
	// answer reached the connection's socket (SO_TIMESTAMPING, software
	// receive stamps; Arrived), whenever the caller's goroutine got the
	// core to read it. Not with TLS: the stamps are of the socket's reads.
	Kernel bool
	// TLS, when set, speaks HTTPS: the connection's handshake is made
	// with it, the server name being Host's unless it names one.
	TLS *tls.Config

	conn  net.Conn
	br    *bufio.Reader
	first firstRead
	req   []byte
}

// firstRead notes when the first read after a request returned bytes:
// the answer's first byte, taken in the caller's goroutine as the read
// returns, and, with a raw connection (Conn.Kernel), when the kernel
// received the bytes that read returned.
type firstRead struct {
	r       io.Reader
	at      time.Time
	raw     syscall.RawConn
	arrived time.Time
	oob     [128]byte
}

func (f *firstRead) Read(p []byte) (int, error) {
	if f.raw == nil {
		n, err := f.r.Read(p)
		if n > 0 && f.at.IsZero() {
			f.at = time.Now()
		}
		return n, err
	}
	var n, oobn int
	var rerr error
	err := f.raw.Read(func(fd uintptr) bool {
		for {
			n, oobn, _, _, rerr = unix.Recvmsg(int(fd), p, f.oob[:], unix.MSG_DONTWAIT)
			if rerr != unix.EINTR {
				return rerr != unix.EAGAIN
			}
		}
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, io.EOF
	}
	if f.at.IsZero() {
		f.at = time.Now()
		f.arrived = received(f.oob[:oobn])
	}
	return n, nil
}

// received is the software receive stamp among a read's control
// messages (struct scm_timestamping: three timespecs, the first the
// software one), or zero if there is none.
func received(oob []byte) time.Time {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SO_TIMESTAMPING && len(m.Data) >= 16 {
			sec := int64(binary.NativeEndian.Uint64(m.Data[0:8]))
			nsec := int64(binary.NativeEndian.Uint64(m.Data[8:16]))
			if sec != 0 || nsec != 0 {
				return time.Unix(sec, nsec)
			}
		}
	}
	return time.Time{}
}

// stampReceipts asks the kernel for software receive stamps on conn.
func stampReceipts(conn net.Conn) (syscall.RawConn, error) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("receive stamps: %T has no file descriptor", conn)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	var serr error
	err = raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPING,
			unix.SOF_TIMESTAMPING_RX_SOFTWARE|unix.SOF_TIMESTAMPING_SOFTWARE)
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return nil, fmt.Errorf("receive stamps: SO_TIMESTAMPING: %w", err)
	}
	return raw, nil
}

// maxAnswer bounds an answer's body.
const maxAnswer = 64 << 20

// Do sends one request (a JSON body if body is not nil) and returns the
// answer's status, its body and when its first byte came.
func (c *Conn) Do(ctx context.Context, method, path string, body []byte) (int, []byte, time.Time, error) {
	if c.conn == nil {
		d := net.Dialer{Timeout: c.Timeout}
		conn, err := d.DialContext(ctx, "tcp", c.Host)
		if err != nil {
			return 0, nil, time.Time{}, err
		}
		if c.TLS != nil {
			if c.Kernel {
				conn.Close()
				return 0, nil, time.Time{}, fmt.Errorf("receive stamps over TLS: the kernel stamps the socket's reads, not the answers")
			}
			conf := c.TLS
			if conf.ServerName == "" {
				conf = conf.Clone()
				conf.ServerName, _, _ = net.SplitHostPort(c.Host)
			}
			tc := tls.Client(conn, conf)
			if err := tc.HandshakeContext(ctx); err != nil {
				conn.Close()
				return 0, nil, time.Time{}, fmt.Errorf("TLS handshake with %s: %w", c.Host, err)
			}
			conn = tc
		}
		c.conn, c.first.r, c.first.raw = conn, conn, nil
		if c.Kernel {
			raw, err := stampReceipts(conn)
			if err != nil {
				conn.Close()
				return 0, nil, time.Time{}, err
			}
			c.first.raw = raw
		}
		c.br = bufio.NewReader(&c.first)
		context.AfterFunc(ctx, func() { conn.Close() })
	}
	r := append(c.req[:0], method...)
	r = append(r, ' ')
	r = append(r, path...)
	r = append(r, " HTTP/1.1\r\nHost: "...)
	r = append(r, c.Host...)
	r = append(r, "\r\nAuthorization: Bearer "...)
	r = append(r, c.Token...)
	if body != nil {
		r = append(r, "\r\nContent-Type: application/json\r\nContent-Length: "...)
		r = strconv.AppendInt(r, int64(len(body)), 10)
	}
	r = append(r, "\r\n\r\n"...)
	r = append(r, body...)
	c.req = r
	c.first.at, c.first.arrived = time.Time{}, time.Time{}
	if c.Timeout > 0 {
		_ = c.conn.SetDeadline(time.Now().Add(c.Timeout))
	}
	if _, err := c.conn.Write(r); err != nil {
		c.Close()
		return 0, nil, time.Time{}, err
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		c.Close()
		return 0, nil, time.Time{}, err
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	resp.Body.Close()
	if err != nil || resp.Close {
		c.Close()
	}
	return resp.StatusCode, data, c.first.at, err
}

// Arrived is when the kernel received the first bytes of the last
// answer (Kernel), zero if it gave no stamp.
func (c *Conn) Arrived() time.Time { return c.first.arrived }

// Close closes the connection; the next Do dials again.
func (c *Conn) Close() {
	if c.conn != nil {
		c.conn.Close()
		c.conn, c.br = nil, nil
	}
}

// Excerpt is the start of an answer's body, for an error message.
func Excerpt(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > 200 {
		b = b[:200]
	}
	return string(b)
}
