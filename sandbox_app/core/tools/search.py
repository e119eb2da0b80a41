"""Ranked search over documents the user edits, with BM25 from the maintained ``bm25s`` library.

The Brightgrid documents of the ReAct tutorial are the default corpus. ``bm25s`` scores with
Lucene's IDF, which stays positive on a three-document corpus (rank-bm25's Okapi IDF can go
negative there and hide the right document). Documents and queries are tokenised alike:
English stop words dropped and every word reduced to its Snowball stem (PyStemmer), so
"refund time" finds "Refunds take 5 working days." and "exporting" finds "exports".
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from sandbox_app.lazy_import import lazy_import

if TYPE_CHECKING:
    import asyncio
else:
    asyncio = lazy_import("asyncio")


BRIGHTGRID_DOCUMENTS: tuple[str, ...] = (
    "Brightgrid Pro costs $20 per month per developer.",
    "The free plan exports up to 5,000 rows.",
    "Refunds take 5 working days.",
)
NO_MATCH = "No matching document."


class Search:
    name = "search"
    description = "Searches the team's documents and returns the best matches."
    input_hint = "search text"
    read_only = True
    max_input = 500

    def __init__(
        self, documents: tuple[str, ...] | list[str] = BRIGHTGRID_DOCUMENTS, top_k: int = 2
    ):
        self.documents = tuple(d.strip() for d in documents if d.strip())
        self.top_k = top_k
        self._index: Any = None

    async def run(self, input: str) -> str:
        if self._index is None:
            # bm25s and numpy take about half a second to import: keep that off the UI thread.
            return await asyncio.to_thread(self.search, input)
        return self.search(input)

    def search(self, query: str) -> str:
        """The top matches joined by `` | ``, or ``No matching document.``"""
        import bm25s

        if not self.documents:
            return NO_MATCH
        if self._index is None:
            index = bm25s.BM25()
            index.index(_tokens(list(self.documents)), show_progress=False)
            self._index = index
        tokens = _tokens([query], return_ids=False)
        if not tokens[0]:
            return NO_MATCH
        k = min(self.top_k, len(self.documents))
        ids, scores = self._index.retrieve(tokens, k=k, show_progress=False)
        hits = [self.documents[int(i)] for i, s in zip(ids[0], scores[0], strict=True) if s > 0]
        return " | ".join(hits) if hits else NO_MATCH


def _tokens(texts: list[str], return_ids: bool = True) -> Any:
    """One tokenisation for documents and queries: stop words out, words stemmed."""
    import bm25s

    return bm25s.tokenize(
        texts, stopwords="en", stemmer=_stem, show_progress=False, return_ids=return_ids
    )


_per_thread = threading.local()


def _stem(words: list[str]) -> list[str]:
    """Stemmed by this thread's Snowball stemmer, made once: a search per tool call need not
    build its own, and a PyStemmer object is not to be shared between threads (searches run
    on the window's loop, a worker thread and the test set's loop)."""
    stemmer = getattr(_per_thread, "stemmer", None)
    if stemmer is None:
        import Stemmer

        stemmer = _per_thread.stemmer = Stemmer.Stemmer("english")
    stemmed: list[str] = stemmer.stemWords(words)
    return stemmed
