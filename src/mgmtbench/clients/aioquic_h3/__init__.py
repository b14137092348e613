"""aioquic's HTTP/3 client over the device's API (``aioquic-h3``, asyncio), and its knobs
(:mod:`.knobs`; none matters, so no ``aioquic-h3+tuned``). Importing this package does not
import aioquic."""

from mgmtbench.clients.registry import ClientSpec

CLIENTS = [ClientSpec(name="aioquic-h3", order=97,
                      adapter="mgmtbench.clients.aioquic_h3.adapter:AioquicH3Client",
                      knobs="mgmtbench.clients.aioquic_h3.knobs:KNOBS")]
