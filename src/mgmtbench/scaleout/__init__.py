"""Fleets beyond one host: client shards and device labs on Dask workers.

- :mod:`.hub`: the control network of a local cluster (a namespace per worker, one bridge);
- :mod:`.cluster`: which cluster a run uses: a local one whose workers live in namespaces of
  their own (the default), an existing scheduler (``--dask-scheduler``) or Dask's
  ``SSHCluster`` (``--dask-ssh``);
- :mod:`.shard`: what runs on a worker: its own labs (or its share of an inventory), today's
  fleet runner in a worker process, rounds held at one barrier;
- :mod:`.fleet`: the driver: shards prepared, each round released at once, results merged into
  one benchmark row.
"""
