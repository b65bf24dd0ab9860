"""``promoter demo``'s world: the sample control plane and platform repo built from the bundled
examples and promoted dev -> prod (``promotion``), and, when the hub extra is installed, a hub
on loopback fed by simulated clusters (``hub``).

May import: ``runtime``, the promotion flows, ``hub`` and everything below them; never ``cli``."""
