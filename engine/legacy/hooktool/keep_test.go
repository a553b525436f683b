package hooktool

import "testing"

// The keeper gives an answer kept until a write only while nothing can
// have written since: no other process of the hook ran since an answer
// confirmed the run's write generation, and that generation is the
// answer's own.
func TestKeeperFollowsTheWriteGeneration(t *testing.T) {
	var k keeper
	const sock = "/run/x.sock"
	read := func(key string, gen uint64) {
		t.Helper()
		epoch, alone := k.sending()
		k.heard(sock, key, epoch, alone, &Response{Stdout: key, Keep: KeepUntilWrite, Gen: gen})
	}
	has := func(key string) bool { _, ok := k.answer(key); return ok }
	read("a", 0)
	read("b", 0)
	k.heard(sock, "c", 0, true, &Response{Stdout: "c", Keep: KeepForHook})
	if !has("a") || !has("b") || !has("c") {
		t.Fatal("answers not kept")
	}
	// Another process runs: it may write at any moment.
	_ = k.outside(func() error {
		if has("a") || !has("c") {
			t.Error("while another process runs: an answer kept until a write was given, or one kept for the hook was not")
		}
		read("a", 0) // answered while it runs: confirms nothing
		return nil
	})
	if has("b") {
		t.Fatal("after another process ran, a kept answer was given before the run confirmed it")
	}
	read("a", 0) // the generation stood still: what was kept holds
	if !has("b") {
		t.Fatal("an answer at the same generation did not confirm the kept ones")
	}
	_ = k.outside(func() error { return nil })
	read("a", 1) // it wrote
	if has("b") || !has("a") || !has("c") {
		t.Fatal("a newer generation did not retire exactly the older answers kept until a write")
	}
	// A read answered before a write this process heard of since (calls
	// in flight at once, as in a pipeline) is not kept.
	epoch, alone := k.sending()
	read("w", 2)
	k.heard(sock, "b", epoch, alone, &Response{Stdout: "b", Keep: KeepUntilWrite, Gen: 1})
	if has("b") {
		t.Fatal("an answer older than a write already heard was kept")
	}
}
