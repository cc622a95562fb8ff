package ratelimit

import "context"

// Counts of one key that arrive together share Redis calls. While a count
// of a key is on its way to Redis on this replica, the next counts of that
// key wait together in a batch; when the call lands, the batch goes in one
// call (carried by its first member), and counts arriving meanwhile form
// the next batch. A partner sending many requests at once so costs Redis
// one call per round trip instead of one per request, at the price of at
// most one round trip of waiting. allow gives every member of a batch the
// decision it would get if the members had come one after another, so the
// count stays exact.

// batch is counts of one key that go to Redis in one call.
type batch struct {
	n     int           // members; fixed once start is closed
	start chan struct{} // closed when the batch may go
	done  chan struct{} // closed when ds is filled
	ds    []Decision    // decision of each member, in order
}

// count counts one request for key under p, in a batch when a count of key
// is already on its way.
func (l *Limiter) count(ctx context.Context, p Policy, key string) Decision {
	k := policyKey{p.Name, key}
	l.flightMu.Lock()
	b, busy := l.flights[k]
	if !busy {
		l.flights[k] = nil // on its way, nothing waiting
		l.flightMu.Unlock()
		d := l.Allow(ctx, p, key)
		l.land(k)
		return d
	}
	if b == nil {
		b = &batch{start: make(chan struct{}), done: make(chan struct{})}
		l.flights[k] = b
	}
	i := b.n
	b.n++
	l.flightMu.Unlock()
	if i > 0 {
		<-b.done
		return b.ds[i]
	}
	<-b.start
	b.ds = make([]Decision, b.n)
	// The call decides for every member: the first one's cancellation
	// must not turn it into a failure (and a fallback) for the others.
	l.allow(context.WithoutCancel(ctx), p, key, b.ds)
	close(b.done)
	l.land(k)
	return b.ds[0]
}

// land ends the call of key k on its way: the waiting batch, if any, goes
// next.
func (l *Limiter) land(k policyKey) {
	l.flightMu.Lock()
	defer l.flightMu.Unlock()
	if b := l.flights[k]; b != nil {
		l.flights[k] = nil // the batch's call is on its way now
		close(b.start)
		return
	}
	delete(l.flights, k)
}
