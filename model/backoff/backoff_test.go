package backoff

import (
	"context"
	"testing"
	"time"
)

func TestBackoffDoublesToMaxWithJitterDown(t *testing.T) {
	b := Policy{Min: time.Second, Max: 10 * time.Second}
	for attempt, full := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 4: 8 * time.Second, 5: 10 * time.Second, 50: 10 * time.Second} {
		for range 50 {
			d := b.Delay(attempt)
			if d > full || d < full-full/5 {
				t.Fatalf("attempt %d: delay %s outside [%s, %s]", attempt, d, full-full/5, full)
			}
		}
	}
	half := Policy{Min: 100 * time.Millisecond, Max: time.Second, Jitter: 0.5}
	for range 50 {
		if d := half.Delay(1); d < 50*time.Millisecond || d > 100*time.Millisecond {
			t.Fatalf("jitter 0.5: %s", d)
		}
	}
	if d := (Policy{Min: time.Second}).Delay(3); d <= 0 {
		t.Fatalf("a zero Max must not make the delay zero: %s", d)
	}
}

func TestSleepEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if Sleep(ctx, time.Hour) {
		t.Fatal("Sleep on an ended context reported the whole wait passed")
	}
	if !Sleep(context.Background(), time.Millisecond) || !Sleep(context.Background(), 0) {
		t.Fatal("Sleep on a live context did not report the wait passed")
	}
}
