"""One extension per feature; each module ends in `async def setup(bot)`."""
