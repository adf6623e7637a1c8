//! A palette with the search index that follows it: what a host that takes catalogs as they
//! change, and answers the model's searches, holds.

use crate::{
    Dispatch, Found, Observation, Palette, PaletteConfig, Refusal, ToolIndex, SEARCH_TOOL,
};

/// A [`Palette`] and the BM25 [`ToolIndex`] its search tool looks tools up in, kept in step:
/// every change goes through [`change`](Self::change), and the index is built again at the
/// first search after one, once for any number of changes in between (a host hearing a
/// burst of list changes from many servers builds it once, and only if the model searches).
///
/// ```
/// use mcp_sansio::{Allowlist, Catalog, CatalogPolicy, Limits};
/// use mcp_sansio_host::{IndexedPalette, Observation, PaletteConfig, SEARCH_TOOL};
///
/// let weather = Catalog::from_json(
///     r#"{"tools":[{"name":"get_forecast","description":"Weather forecast for a city.","inputSchema":{"type":"object"}}]}"#,
///     CatalogPolicy::STRICT,
///     &Limits::default(),
/// )?;
/// let mut palette = IndexedPalette::new(PaletteConfig::default());
/// let allow: Allowlist = ["get_forecast"].into_iter().collect();
/// palette.change(|p| p.set_server("weather", &allow, &weather))?;
/// // The search tool is answered here; no server hears of it.
/// let Err(found) = palette.route(SEARCH_TOOL, r#"{"query":"forecast"}"#) else { panic!() };
/// assert!(found.text().starts_with("get_forecast"));
/// // Any other name is checked as any call, and goes to its server.
/// let Ok(call) = palette.route("get_forecast", "{}") else { panic!() };
/// assert_eq!((call.server, call.tool), ("weather", "get_forecast"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct IndexedPalette {
    palette: Palette,
    /// The index over the palette as it is, if built since the last change.
    index: Option<ToolIndex>,
}

impl IndexedPalette {
    /// An empty palette under `config`.
    pub fn new(config: PaletteConfig) -> Self {
        IndexedPalette {
            palette: Palette::new(config),
            index: None,
        }
    }

    /// The palette: what the model is offered, and the server behind each name.
    pub fn palette(&self) -> &Palette {
        &self.palette
    }

    /// Changes the palette (a server's catalog set or removed, a tool disclosed) through
    /// `change`, and gives back what it returns; the next search builds the index again.
    pub fn change<T>(&mut self, change: impl FnOnce(&mut Palette) -> T) -> T {
        self.index = None;
        change(&mut self.palette)
    }

    /// Forgets every disclosure ([`Palette::hide_all`]): the next offer is the search tool
    /// alone. The index is kept, since it holds every offered tool, disclosed or not.
    pub fn hide_all(&mut self) {
        self.palette.hide_all();
    }

    /// Runs the model's call of the search tool ([`Palette::search`]) over the palette as
    /// it is now.
    ///
    /// # Errors
    /// What [`Palette::search`] refuses.
    pub fn search(&mut self, arguments: &str) -> Result<Found, Refusal> {
        let palette = &self.palette;
        let index = self.index.get_or_insert_with(|| ToolIndex::bm25(palette));
        self.palette.search(index, arguments)
    }

    /// Routes the model's call of `name` with argument text `arguments`: a call for a
    /// server, checked ([`Palette::dispatch`]), or, as `Err`, what the model reads at once
    /// with no server involved: the search tool's answer, or the refusal of a call that
    /// must not be sent.
    ///
    /// # Errors
    /// The observation for the model when no server is to be called.
    pub fn route(&mut self, name: &str, arguments: &str) -> Result<Dispatch<'_>, Observation> {
        if name == SEARCH_TOOL {
            return Err(match self.search(arguments) {
                Ok(found) => Observation::Answer {
                    text: found.to_string(),
                },
                Err(refusal) => Observation::refused(&refusal),
            });
        }
        self.palette
            .dispatch(name, arguments)
            .map_err(|refusal| Observation::refused(&refusal))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use super::*;
    use mcp_sansio::{Allowlist, Catalog, CatalogPolicy, Limits};

    fn catalog(json: &str) -> Catalog {
        Catalog::from_json(json, CatalogPolicy::STRICT, &Limits::default()).unwrap()
    }

    const WEATHER: &str = r#"{"tools":[{"name":"get_forecast","description":"Weather forecast for a city.","inputSchema":{"type":"object"}}]}"#;

    /// A palette holding the weather server's one tool, allowed by `allow`.
    fn with_weather(allow: &Allowlist) -> IndexedPalette {
        let mut palette = IndexedPalette::new(PaletteConfig::default());
        palette
            .change(|p| p.set_server("weather", allow, &catalog(WEATHER)))
            .unwrap();
        palette
    }

    fn found(palette: &mut IndexedPalette, query: &str) -> String {
        match palette.route(SEARCH_TOOL, &format!(r#"{{"query":"{query}"}}"#)) {
            Err(observation) => observation.text().to_owned(),
            Ok(call) => panic!("the search tool was routed to server {}", call.server),
        }
    }

    /// A search after any change sees the palette as it is: a tool that joined is found,
    /// one that left is not, even when the index was built before either change.
    #[test]
    fn every_change_is_searched_at_the_next_search() {
        let allow: Allowlist = ["get_forecast", "read_file"].into_iter().collect();
        let files = catalog(
            r#"{"tools":[{"name":"read_file","description":"Read a file from disk.","inputSchema":{"type":"object"}}]}"#,
        );
        let mut palette = with_weather(&allow);
        assert!(found(&mut palette, "weather forecast").starts_with("get_forecast"));
        palette
            .change(|p| p.set_server("files", &allow, &files))
            .unwrap();
        assert!(found(&mut palette, "read a file").starts_with("read_file"));
        assert!(palette.change(|p| p.remove_server("weather")));
        assert!(!found(&mut palette, "weather forecast").contains("get_forecast"));
        // A refused search and a refused call are observations, never routed.
        let Err(refused) = palette.route(SEARCH_TOOL, "{}") else {
            panic!("routed")
        };
        assert!(refused.is_error());
        let Err(refused) = palette.route("get_forecast", "{}") else {
            panic!("routed")
        };
        assert_eq!(
            refused.text(),
            "not called: there is no tool named 'get_forecast'; call one of the tools offered"
        );
        let call = palette.route("read_file", "{}").unwrap();
        assert_eq!((call.server, call.tool), ("files", "read_file"));
    }

    /// Hiding what was disclosed keeps the index, and the hidden tool is found again.
    #[test]
    fn hiding_every_disclosure_keeps_the_index() {
        let mut palette = with_weather(&["get_forecast"].into_iter().collect());
        assert!(found(&mut palette, "forecast").starts_with("get_forecast"));
        assert_eq!(palette.palette().disclosed().count(), 1);
        palette.hide_all();
        assert_eq!(palette.palette().disclosed().count(), 0);
        assert!(palette.index.is_some(), "the index was dropped");
        assert!(found(&mut palette, "forecast").starts_with("get_forecast"));
        assert_eq!(palette.palette().disclosed().count(), 1);
    }
}
