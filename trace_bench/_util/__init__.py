"""Leaf helpers any layer may use (DESIGN §2): deferred imports (:mod:`.lazy`), process lifetimes
(:mod:`.processes`), process-wide environment defaults (:mod:`.runtime`), a cheap ``inspect.stack``
(:mod:`.fast_inspect`), importing a file off ``sys.path`` (:mod:`.imports`), the quiet JSON
request handler of our loopback servers (:mod:`.http`), secret masking (:mod:`.masking`), errors a
user can fix (:mod:`.errors`) and why a task or trainer cannot run here (:mod:`.availability`).  None imports a layer of the
package; this package imports nothing (a sandbox sees only what its code imports)."""
