package charmapi

// AddStorage asks for count more instances of the named store, as Juju's
// storage-add: the control plane attaches them within the charm's range,
// and the next universe lists them. Calls add up.
func (r *Result) AddStorage(name string, count int) *Result {
	if r.StorageAdd == nil {
		r.StorageAdd = map[string]int{}
	}
	r.StorageAdd[name] += count
	return r
}
