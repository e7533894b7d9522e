export default function Page() { return <p>integrations</p>; }
