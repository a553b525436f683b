// Package forward is the one path a request takes from one control-plane
// node to another: writes a follower passes to the leader, leader-only API
// requests, Raft membership calls and charm replication. It owns the
// pooled transport they share, the header that marks a forwarded request
// and the batching of forwarded writes; the error envelope they answer
// with is package model/fault's.
package forward
