// Package charm packs charm directories into content-addressed archives,
// unpacks them on agents, and checks an environment against the charms it
// names.
//
// A packed charm is identified by the sha256 of its archive. Packing is
// deterministic — sorted entries, zero times, owner 0, fixed modes, Go
// hooks built reproducibly — so packing unchanged sources again yields the
// same hash, and applying an unchanged environment changes nothing.
package charm
