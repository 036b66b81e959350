"""The bulk write path: stream a dump into ``neo4j-admin database import`` CSVs, then import them offline.

One module per step: ``staging`` and ``parse`` (1), ``partitions`` (2), ``vectors`` (2b), ``admin`` (3).

1. Parsing writes facts, entity ids and names to spool files, hash-partitioned (constant memory). A big
   uncompressed line-based file is cut into byte ranges at line boundaries and the ranges are parsed by a
   pool of worker processes, one per core; a malformed line is still reported with its file:line (line
   numbers are shifted from the range's to the file's), in file order, and ``--strict`` still stops at the
   first one. Facts are staged as the CSV rows neo4j-admin reads.
2. Each partition is then deduplicated in memory (no sort: neo4j-admin reads rows in any order), also in
   parallel: its distinct facts become one relationships CSV part, its distinct ids one entities CSV part,
   named as on the online path (the last English label in file order wins; an entity without one gets its
   default name). Facts are partitioned by head and ids by id, so a partition holds every copy of its rows.
2b. With embeddings on, each entity's name vector is added to its CSV row (``vectors``): the import writes the
   vectors with the nodes and the vector index is built once afterwards, instead of a Cypher write and an
   index insertion per entity.
3. The managed server is stopped, ``neo4j-admin database import full`` writes the ``neo4j`` database from the
   CSVs, and the server is started again. Neo4j Community has one user database and import needs it offline,
   so the bulk path only runs against the managed local server and only into a database that holds nothing
   but (an earlier load of) the same KG.
4. The shared finishing steps (schema, relation nodes, the relations' embeddings, indexes, counts) then run
   online, exactly as after an online load; the relation counts come from step 2 instead of a scan of the
   graph.
"""

from kgqa.loaders.bulk.admin import import_args, neo4j_import
from kgqa.loaders.bulk.files import (
    DATABASE,
    ENTITY_HEADER,
    RELATIONSHIP_HEADER,
    BulkFiles,
    csv_field,
    iter_rows,
)
from kgqa.loaders.bulk.parse import StagedInput, close_pool, plan_ranges, stage, workers
from kgqa.loaders.bulk.partitions import finish, prepare
from kgqa.loaders.bulk.staging import BulkStager, PartitionStager
from kgqa.loaders.bulk.vectors import add_vectors

__all__ = [
    "DATABASE",
    "ENTITY_HEADER",
    "RELATIONSHIP_HEADER",
    "add_vectors",
    "BulkFiles",
    "BulkStager",
    "PartitionStager",
    "StagedInput",
    "close_pool",
    "csv_field",
    "finish",
    "import_args",
    "iter_rows",
    "neo4j_import",
    "plan_ranges",
    "prepare",
    "stage",
    "workers",
]
