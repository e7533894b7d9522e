export default function Page() { return <p>knowledge</p>; }
