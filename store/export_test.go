package store

import "errors"

// Kill ends s as kill -9 ends its process: no last snapshot, its journal
// closed (nothing more is written to it) and the directory's lock let go,
// as the kernel lets it go when a process dies. Close after Kill does
// nothing.
func (s *State) Kill() {
	s.closeOnce.Do(func() {
		close(s.closed)
		<-s.done
		s.mu.Lock()
		j := s.journal
		s.mu.Unlock()
		j.Close()
		s.unlock()
		s.closeErr = errors.New("killed")
	})
}
