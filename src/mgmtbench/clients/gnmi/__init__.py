"""What every gNMI client adapter shares: the paths of each payload and the checks of their
outputs (:mod:`.requests`), the gRPC status translation and the TLS and credential checks
(:mod:`.common`). Declares no client itself (each library's package under
:mod:`mgmtbench.clients` does)."""
